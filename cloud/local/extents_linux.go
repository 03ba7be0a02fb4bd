//go:build linux

package local

import (
	"errors"
	"os"
	"syscall"

	"github.com/imgflow/imgflow/vhd"
)

// lseek whence values for sparse files (Linux).
const (
	seekData = 3
	seekHole = 4
)

// dataExtents lists the regions of f holding data (SEEK_DATA/SEEK_HOLE),
// so copying a mostly empty VHD does not read gigabytes of holes. Should
// the filesystem not support it, the whole file is one extent.
func dataExtents(f *os.File, size int64) []vhd.Range {
	var out []vhd.Range
	for off := int64(0); off < size; {
		start, err := f.Seek(off, seekData)
		if err != nil {
			// ENXIO: no data after off. Anything else: be safe, copy the rest.
			if !isENXIO(err) {
				out = append(out, vhd.Range{Offset: off, Length: size - off})
			}
			break
		}
		if start >= size {
			break
		}
		end, err := f.Seek(start, seekHole)
		if err != nil || end > size {
			end = size
		}
		out = append(out, vhd.Range{Offset: start, Length: end - start})
		off = end
	}
	return out
}

func isENXIO(err error) bool { return errors.Is(err, syscall.ENXIO) }
