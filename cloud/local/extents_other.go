//go:build !linux

package local

import (
	"os"

	"github.com/imgflow/imgflow/cloud"
)

// dataExtents treats the whole file as data where SEEK_DATA is not used;
// copySparse still skips the zero chunks.
func dataExtents(_ *os.File, size int64) []cloud.ByteRange {
	if size == 0 {
		return nil
	}
	return []cloud.ByteRange{{Offset: 0, Length: size}}
}
