//go:build !unix

package packer

import "io/fs"

type fileID struct{}

func identity(fs.FileInfo) (fileID, bool) { return fileID{}, false }

func (fileID) String() string { return "" }
