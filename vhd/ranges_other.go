//go:build !(linux || darwin || freebsd)

package vhd

import "os"

// seekDataRanges reports SEEK_DATA/SEEK_HOLE as unsupported on systems
// without them; DataRanges then falls back to the whole file.
func seekDataRanges(_ *os.File, _ int64) ([]Range, bool, error) {
	return nil, false, nil
}
