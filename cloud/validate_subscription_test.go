package cloud_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

func TestValidateSubscriptionID(t *testing.T) {
	assert.NoError(t, cloud.ValidateSubscriptionID("00000000-0000-0000-0000-00000000beef"))
	assert.NoError(t, cloud.ValidateSubscriptionID("8ECADF0A-1E2B-4C3D-9E8F-0123456789AB"))
	for _, bad := range []string{"", "beef", "00000000-0000-0000-0000-00000000beefx", "/subscriptions/00000000-0000-0000-0000-00000000beef", "00000000000000000000000000000000"} {
		err := cloud.ValidateSubscriptionID(bad)
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "GUID", bad)
	}
}
