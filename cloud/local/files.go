package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/vhd"
)

// files keeps content in sparse data files (azsim.Data): a blob's under
// <account>/<container>/<blob>, a compute resource's under .compute. A
// file is written as a temp file and renamed into place, never rewritten,
// so an open file keeps the content it had.
type files struct {
	dir string
	// memory skips fsync: a memory provider's data goes with the process.
	memory   bool
	readOnly bool
	// beforeRemoval, set only by tests, runs before a deleted resource's
	// file is removed (after the state without it is saved); an error
	// stops the delete there, as a crash would.
	beforeRemoval func(path string) error
}

const (
	// tmpDirName is where data is written before being renamed into
	// place; a leading dot cannot clash with a storage account name.
	tmpDirName = ".tmp"
	// dataDirName holds the content of compute resources.
	dataDirName = ".compute"
)

// reset empties the temp directory.
func (f *files) reset() error {
	tmp := filepath.Join(f.dir, tmpDirName)
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("clean blob directory: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return fmt.Errorf("create blob directory: %w", err)
	}
	return nil
}

// path is the file of k. A compute resource's is a hash of its id, since
// ids can be longer than a file name.
func (f *files) path(k azsim.Key) string {
	if k.ID != "" {
		sum := sha256.Sum256([]byte(k.ID))
		return filepath.Join(f.dir, dataDirName, hex.EncodeToString(sum[:]))
	}
	parts := []string{f.dir, pathSegment(k.Account), pathSegment(k.Container)}
	for _, seg := range strings.Split(k.Blob, "/") {
		parts = append(parts, pathSegment(seg))
	}
	return filepath.Join(parts...)
}

// pathSegment maps one "/"-separated part of a blob name to a file name
// that cannot escape its directory; escaping keeps the mapping one-to-one.
func pathSegment(s string) string {
	switch s {
	case "":
		return "%"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
}

// staged is a written temp file.
type staged string

func (s staged) Discard() { os.Remove(string(s)) }

// content is an open data file.
type content struct {
	*os.File
	fi os.FileInfo
}

func (c *content) Size() int64 { return c.fi.Size() }

func (c *content) DataRanges() []vhd.Range { return dataRanges(c.File, c.fi.Size()) }

// Write implements azsim.Data: only the non-zero span of each chunk is
// written, so the file stays as sparse as the source.
func (f *files) Write(ctx context.Context, size int64, src io.ReaderAt, ranges []vhd.Range) (azsim.Staged, string, error) {
	return f.writeTemp(size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, src, ranges, size)
	})
}

// Copy implements azsim.Data, keeping the holes of c.
func (f *files) Copy(ctx context.Context, c azsim.Content, size int64) (azsim.Staged, string, error) {
	return f.writeTemp(size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, c, c.DataRanges(), size)
	})
}

// writeTemp creates a temp file of the given size, lets fill write it,
// and syncs it (not for a memory provider); it returns the file and
// fill's result. The temp file is removed on failure.
func (f *files) writeTemp(size int64, fill func(*os.File) (string, error)) (azsim.Staged, string, error) {
	if f.readOnly {
		return nil, "", errReadOnly
	}
	t, err := os.CreateTemp(filepath.Join(f.dir, tmpDirName), "blob-*")
	if err != nil {
		return nil, "", err
	}
	name := t.Name()
	sum, err := func() (string, error) {
		if err := t.Truncate(size); err != nil {
			return "", err
		}
		sum, err := fill(t)
		if err != nil || f.memory {
			return sum, err
		}
		return sum, t.Sync()
	}()
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return nil, "", err
	}
	return staged(name), sum, nil
}

// Open implements azsim.Data.
func (f *files) Open(_ context.Context, k azsim.Key) (azsim.Content, error) {
	file, err := os.Open(f.path(k))
	if err != nil {
		return nil, err
	}
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, err
	}
	return &content{File: file, fi: fi}, nil
}

// Has implements azsim.Data.
func (f *files) Has(k azsim.Key) bool {
	_, err := os.Stat(f.path(k))
	return err == nil
}

// Same implements azsim.Data: files are replaced, never rewritten.
func (f *files) Same(c azsim.Content, k azsim.Key) bool {
	cur, err := os.Stat(f.path(k))
	return err == nil && os.SameFile(c.(*content).fi, cur)
}

// Place implements azsim.Data.
func (f *files) Place(s azsim.Staged, k azsim.Key) error {
	dst := f.path(k)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(string(s.(staged)), dst)
}

// Remove implements azsim.Data. The resource is deleted whatever happens
// to its file: a file that cannot be removed is only unreferenced, and
// the next Open removes it (removeOrphanData).
func (f *files) Remove(k azsim.Key) error {
	path := f.path(k)
	if f.beforeRemoval != nil {
		if err := f.beforeRemoval(path); err != nil {
			return err
		}
	}
	_ = os.Remove(path)
	return nil
}
