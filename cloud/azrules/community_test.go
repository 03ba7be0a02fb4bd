package azrules_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestCheckCommunityProfileChange(t *testing.T) {
	const id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g"
	flatcar := &cloud.CommunityInfo{PublicNamePrefix: "flatcar", PublisherURI: "https://www.flatcar.org/", PublisherContact: "infra@flatcar-linux.org", EULA: "https://kinvolk.io/legal/open-source/"}
	newEULA := *flatcar
	newEULA.EULA = "https://www.flatcar.org/license"
	upper := *flatcar
	upper.PublicNamePrefix = "Flatcar"
	other := *flatcar
	other.PublicNamePrefix = "flatcar4capi"

	for _, tc := range []struct {
		name      string
		old, next *cloud.CommunityInfo
		refused   string // "" when allowed: the property named in the error
	}{
		{"private stays private", nil, nil, ""},
		{"community without a profile in the PUT", flatcar, nil, ""},
		{"same profile", flatcar, flatcar, ""},
		{"publisher details change", flatcar, &newEULA, ""},
		{"prefix in another case", flatcar, &upper, ""},
		{"private to community", nil, flatcar, "'sharingProfile.permissions' from 'Private' to 'Community'"},
		{"another prefix", flatcar, &other, "'sharingProfile.communityGalleryInfo.publicNamePrefix' from 'flatcar' to 'flatcar4capi'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := azrules.CheckCommunityProfileChange(id, tc.old, tc.next)
			if tc.refused == "" {
				assert.Nil(t, err)
				return
			}
			require.NotNil(t, err)
			assert.Equal(t, http.StatusConflict, err.StatusCode)
			assert.Equal(t, cloud.CodePropertyChangeNotAllowed, err.Code)
			assert.Equal(t, id, err.Resource)
			assert.Contains(t, err.Message, tc.refused)
		})
	}
}
