//go:build linux || darwin || freebsd

package vhd

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// seekDataRanges walks f's data and holes with SEEK_DATA/SEEK_HOLE.
// supported is false when the filesystem rejects those whence values.
func seekDataRanges(f *os.File, size int64) (ranges []Range, supported bool, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, false, err
	}
	supported = true
	ctrlErr := rc.Control(func(fd uintptr) {
		ranges, supported, err = walkData(int(fd), size)
	})
	if ctrlErr != nil {
		return nil, false, ctrlErr
	}
	return ranges, supported, err
}

// walkData does the walk on a raw descriptor, restoring its offset.
func walkData(fd int, size int64) (ranges []Range, supported bool, err error) {
	saved, err := unix.Seek(fd, 0, io.SeekCurrent)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if _, serr := unix.Seek(fd, saved, io.SeekStart); serr != nil && err == nil {
			err = serr
		}
	}()

	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		switch {
		case errors.Is(err, unix.ENXIO):
			// No data at or after off: the rest is a hole.
			return ranges, true, nil
		case unsupportedSeek(err):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
		if data >= size {
			break
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		switch {
		case errors.Is(err, unix.ENXIO):
			// The file shrank under us; stop at what we have seen.
			hole = size
		case unsupportedSeek(err):
			return nil, false, nil
		case err != nil:
			return nil, false, err
		}
		hole = min(hole, size)
		if hole <= data {
			// Cannot happen per POSIX; do not loop forever if it does.
			return nil, false, nil
		}
		ranges = appendRange(ranges, Range{Offset: data, Length: hole - data})
		off = hole
	}
	return ranges, true, nil
}

// unsupportedSeek reports errors meaning "this filesystem has no
// SEEK_DATA/SEEK_HOLE".
func unsupportedSeek(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
