//go:build unix

package packer

import (
	"fmt"
	"io/fs"
	"syscall"
)

// fileID is what tells a file's content apart without reading it: the
// same inode, size and modification time. (Not the change time: linking
// the file into a staging directory changes it.)
type fileID struct {
	dev, ino    uint64
	size, mtime int64
}

func identity(info fs.FileInfo) (fileID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), size: info.Size(), mtime: info.ModTime().UnixNano()}, true
}

// String names the identity's file in a cache directory.
func (id fileID) String() string {
	return fmt.Sprintf("%x-%x-%x-%x", id.dev, id.ino, id.size, id.mtime)
}
