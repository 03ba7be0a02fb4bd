package azrules

import (
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// DiskAccountPrefix starts the host label of a managed disk's SAS URL
// (https://md-….blob.core.windows.net/…). Storage account names are
// lowercase letters and digits only, so such a host never names an
// account.
const DiskAccountPrefix = "md-"

// IsDiskAccount reports whether account, the host label of a blob URL,
// is a managed disk's SAS host rather than a storage account.
func IsDiskAccount(account string) bool {
	return strings.HasPrefix(strings.ToLower(account), DiskAccountPrefix)
}

// Bounds of a disk access (SAS) grant's duration.
const (
	MinGrant = time.Second
	MaxGrant = 24 * time.Hour
)

// CheckDiskUnchanged refuses a PUT of existing disk old that moves it
// (location, resolved; "" when the request gives none) or changes its
// source version or security type (canonical, see DiskSecurityType).
func CheckDiskUnchanged(old *cloud.Disk, location, sourceVersionID, security string) error {
	if location != "" && !strings.EqualFold(location, old.Location) {
		return LocationChanged(old.ID, old.Name, old.ResourceGroup, old.Location, location)
	}
	if !strings.EqualFold(old.SourceImageVersionID, sourceVersionID) {
		return PropertyChange(old.ID, "creationData.galleryImageReference")
	}
	if !strings.EqualFold(old.SecurityType, security) {
		return PropertyChange(old.ID, "securityProfile.securityType")
	}
	return nil
}

// CheckDiskSource refuses to create disk id in location from gallery
// image version v (of a definition with Hyper-V generation hyperV) when v
// is not replicated there, or when the disk has a security type
// (TrustedLaunch, ConfidentialVM) and the image is generation V1.
func CheckDiskSource(id string, v *cloud.ImageVersion, hyperV, location, security string) error {
	var done []string
	replicated := false
	for _, r := range v.Replication {
		if strings.EqualFold(r.State, cloud.ReplicationCompleted) {
			done = append(done, r.Region)
			replicated = replicated || strings.EqualFold(r.Region, location)
		}
	}
	if !replicated {
		if len(done) == 0 {
			done = []string{"no region"}
		}
		return InvalidParameter(id, "Gallery image version %s is not available in %s: replicate it there first (it is replicated to %s).",
			v.ID, location, strings.Join(done, ", "))
	}
	if security != "" && strings.EqualFold(hyperV, cloud.HyperVGenV1) {
		return InvalidParameter(id, "Security type '%s' requires a Hyper-V generation V2 image, but gallery image version %s is %s.",
			security, v.ID, hyperV)
	}
	return nil
}

// CheckGrantDuration refuses a disk access grant (on disk id) shorter
// than MinGrant or longer than MaxGrant.
func CheckGrantDuration(id string, d time.Duration) error {
	if d < MinGrant || d > MaxGrant {
		return InvalidParameter(id, "The access duration %s is invalid: it must be between %s and %s.", d, MinGrant, MaxGrant)
	}
	return nil
}

// GrantActive is the answer to granting access to disk name (id) again
// while a grant is active; until, when known, is the grant's expiry.
func GrantActive(id, name string, until *time.Time) *cloud.Error {
	when := ""
	if until != nil {
		when = " until " + until.Format(time.RFC3339)
	}
	return cloud.Errorf(cloud.CodeOperationNotAllowed, id,
		"Operation 'GrantAccess' is not allowed on disk '%s': access is already granted%s. Revoke access first.", name, when)
}

// DeleteGranted is the answer to deleting disk name (id) while its access
// (SAS) is granted.
func DeleteGranted(id, name string) *cloud.Error {
	return cloud.Errorf(cloud.CodeOperationNotAllowed, id,
		"Operation 'Delete' is not allowed on disk '%s': its access (SAS) is still granted; revoke access first.", name)
}
