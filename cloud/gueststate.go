package cloud

import "strings"

// GuestStateBlobName is the blob a ConfidentialVM disk export writes the
// VM guest state (VMGS) to, next to the VHD: the VHD's name with .vmgs
// for .vhd ("2204-cvm.vhd" → "2204-cvm.vmgs"), or .vmgs appended.
func GuestStateBlobName(vhdName string) string {
	if base, ok := strings.CutSuffix(vhdName, ".vhd"); ok {
		return base + ".vmgs"
	}
	return vhdName + ".vmgs"
}
