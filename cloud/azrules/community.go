package azrules

import (
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// CheckCommunityProfileChange is Azure's rule for the sharing profile of a
// PUT on the existing gallery id: old is its community profile (nil for a
// private gallery), next the one the PUT asks for (nil: unchanged). It
// returns nil when the PUT may proceed.
//
// Azure documents that an existing private gallery cannot be converted to a
// community gallery; a community gallery is created as one. It documents
// no error code for the attempt, so the answer has the shape ARM gives any
// property that cannot change (409 PropertyChangeNotAllowed). The public
// name is derived from the prefix, so the prefix is refused the same way;
// publisher URI, contact and EULA may change (Update-AzGallery and
// `az sig update` set them on an existing gallery). An old prefix of ""
// is one the read did not show (a public gallery's GET may answer only
// its publicNames): nothing to compare.
func CheckCommunityProfileChange(id string, old, next *cloud.CommunityInfo) *cloud.Error {
	switch {
	case next == nil:
		return nil
	case old == nil:
		return cloud.Conflict(cloud.CodePropertyChangeNotAllowed, id,
			"Changing property 'sharingProfile.permissions' from 'Private' to 'Community' is not allowed: an existing private gallery cannot be converted to a community gallery.")
	case old.PublicNamePrefix != "" && !strings.EqualFold(old.PublicNamePrefix, next.PublicNamePrefix):
		return cloud.Conflict(cloud.CodePropertyChangeNotAllowed, id,
			"Changing property 'sharingProfile.communityGalleryInfo.publicNamePrefix' from '%s' to '%s' is not allowed.", old.PublicNamePrefix, next.PublicNamePrefix)
	}
	return nil
}
