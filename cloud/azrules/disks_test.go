package azrules_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestIsDiskAccount(t *testing.T) {
	ref, err := cloud.ParseBlobURL("https://md-0a1b2c3d4e5f.blob.core.windows.net/x0abc/abcd?sv=2018-03-28&sig=s")
	require.NoError(t, err)
	require.True(t, azrules.IsDiskAccount(ref.Account), "a disk's SAS URL (Disks_GrantAccess)")
	require.True(t, azrules.IsDiskAccount("MD-PENDING"), "case-insensitive, as DNS is")
	require.False(t, azrules.IsDiskAccount("mdstorage01"), "a storage account named md…")
	require.False(t, azrules.IsDiskAccount("flatcar0001"))
}

func TestCheckDiskUnchanged(t *testing.T) {
	old := &cloud.Disk{ID: "/d", Name: "d", ResourceGroup: "rg", Location: "westeurope", SourceImageVersionID: "/v", SecurityType: "TrustedLaunch"}
	require.NoError(t, azrules.CheckDiskUnchanged(old, "", "/V", "trustedlaunch"), "no location, case")
	require.NoError(t, azrules.CheckDiskUnchanged(old, "westeurope", "/v", "TrustedLaunch"))
	requireRefusal(t, azrules.CheckDiskUnchanged(old, "eastus", "/v", "TrustedLaunch"), cloud.CodeInvalidResourceLocation, "/d",
		"The resource 'd' already exists in location 'westeurope' in resource group 'rg'", "cannot be created in location 'eastus'")
	requireRefusal(t, azrules.CheckDiskUnchanged(old, "", "/other", "TrustedLaunch"), cloud.CodePropertyChangeNotAllowed, "/d",
		"'creationData.galleryImageReference'")
	requireRefusal(t, azrules.CheckDiskUnchanged(old, "", "/v", ""), cloud.CodePropertyChangeNotAllowed, "/d",
		"'securityProfile.securityType'")
}

func TestCheckDiskSource(t *testing.T) {
	v := &cloud.ImageVersion{ID: "/v", Replication: []cloud.RegionStatus{
		{Region: "westeurope", State: cloud.ReplicationCompleted, Progress: 100},
		{Region: "eastus", State: cloud.ReplicationReplicating, Progress: 40},
	}}
	require.NoError(t, azrules.CheckDiskSource("/d", v, cloud.HyperVGenV2, "westeurope", "ConfidentialVM"))
	require.NoError(t, azrules.CheckDiskSource("/d", v, cloud.HyperVGenV1, "westeurope", ""), "a standard disk takes V1")
	requireRefusal(t, azrules.CheckDiskSource("/d", v, cloud.HyperVGenV2, "eastus", ""), cloud.CodeInvalidParameter, "/d",
		"Gallery image version /v is not available in eastus: replicate it there first (it is replicated to westeurope).")
	requireRefusal(t, azrules.CheckDiskSource("/d", &cloud.ImageVersion{ID: "/v"}, cloud.HyperVGenV2, "eastus", ""), cloud.CodeInvalidParameter, "/d",
		"(it is replicated to no region)")
	requireRefusal(t, azrules.CheckDiskSource("/d", v, cloud.HyperVGenV1, "westeurope", "TrustedLaunch"), cloud.CodeInvalidParameter, "/d",
		"Security type 'TrustedLaunch' requires a Hyper-V generation V2 image, but gallery image version /v is V1.")
}

func TestDiskGrants(t *testing.T) {
	require.NoError(t, azrules.CheckGrantDuration("/d", time.Second))
	require.NoError(t, azrules.CheckGrantDuration("/d", 24*time.Hour))
	for _, d := range []time.Duration{0, time.Second - 1, 24*time.Hour + 1} {
		requireRefusal(t, azrules.CheckGrantDuration("/d", d), cloud.CodeInvalidParameter, "/d", "must be between 1s and 24h0m0s")
	}
	until := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	requireRefusal(t, azrules.GrantActive("/d", "d", &until), cloud.CodeOperationNotAllowed, "/d",
		"Operation 'GrantAccess' is not allowed on disk 'd': access is already granted until 2030-01-02T03:04:05Z. Revoke access first.")
	requireRefusal(t, azrules.GrantActive("/d", "d", nil), cloud.CodeOperationNotAllowed, "/d",
		"Operation 'GrantAccess' is not allowed on disk 'd': access is already granted. Revoke access first.")
	requireRefusal(t, azrules.DeleteGranted("/d", "d"), cloud.CodeOperationNotAllowed, "/d",
		"Operation 'Delete' is not allowed on disk 'd': its access (SAS) is still granted; revoke access first.")
}
