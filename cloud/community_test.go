package cloud

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUpdateCommunityProfile(t *testing.T) {
	old := &CommunityInfo{PublicNamePrefix: "flatcar", PublisherURI: "https://a.org/", PublisherContact: "a@a.org", EULA: "https://a.org/eula"}
	next := &CommunityInfo{PublicNamePrefix: "FLATCAR", PublisherURI: "https://b.org/", PublisherContact: "b@b.org", EULA: "https://b.org/eula"}

	got := UpdateCommunityProfile(old, next)
	assert.Equal(t, CommunityInfo{PublicNamePrefix: "flatcar", PublisherURI: "https://b.org/", PublisherContact: "b@b.org", EULA: "https://b.org/eula"}, *got,
		"the existing prefix's spelling is kept")

	kept := UpdateCommunityProfile(old, nil)
	assert.Equal(t, *old, *kept)
	assert.NotSame(t, old, kept, "a copy")
	assert.Nil(t, UpdateCommunityProfile(nil, nil))
	created := UpdateCommunityProfile(nil, next)
	assert.Equal(t, *next, *created)
	assert.NotSame(t, next, created, "a copy")
}
