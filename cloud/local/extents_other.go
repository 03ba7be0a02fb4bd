//go:build !linux

package local

import (
	"os"

	"github.com/imgflow/imgflow/vhd"
)

// dataExtents treats the whole file as data where SEEK_DATA is not used;
// copySparse still skips the zero chunks.
func dataExtents(_ *os.File, size int64) []vhd.Range {
	if size == 0 {
		return nil
	}
	return []vhd.Range{{Offset: 0, Length: size}}
}
