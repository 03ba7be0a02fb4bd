package armconv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrefixOfPublicName(t *testing.T) {
	assert.Equal(t, "flatcar", prefixOfPublicName("flatcar-23485951-527a-48d6-9d11-6931ff0afc2e"))
	assert.Equal(t, "flatcar-capi", prefixOfPublicName("flatcar-capi-ea790d66-1c3a-4c43-9b2e-5d7c4a0e1f22"))
	assert.Empty(t, prefixOfPublicName("GalleryPublicName"))
	assert.Empty(t, prefixOfPublicName("flatcar-not-a-guid-at-all-not-a-guid-at-al"))
}
