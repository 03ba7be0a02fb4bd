package packer

import (
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
)

// SumCache remembers the SHA-256 of files by their identity on disk
// (device, inode, size, modification time), for what reads the same files
// again: the simulated builds of one process stage the same build tools
// (hard links to the workspace's files, see builtins' stageUploads;
// `imgflow test` simulates about a hundred builds), and packer validate's
// cache key hashes every file a template names. Opened on a directory, it
// keeps the sums of files of keptFrom bytes or more there for the next
// processes too: hashing the megabytes of build tools, or a large file a
// template names, at every plan was a good part of its time. A nil
// *SumCache caches nothing; where the platform gives no file identity,
// nothing is cached either.
type SumCache struct {
	mu   sync.Mutex
	sums map[fileID][32]byte
	dir  string    // "": this process only
	bufs sync.Pool // File's read buffers
}

// keptFrom is the size from which a sum is kept on disk: a smaller file
// hashes about as fast as its sum's file would be read.
const keptFrom = 64 << 10

// NewSumCache returns an empty cache for this process, safe for
// concurrent use.
func NewSumCache() *SumCache { return OpenSumCache("") }

// OpenSumCache returns a cache that also keeps its sums in dir, one small
// file per identity ("" keeps them in memory only). A sum that cannot be
// read or written there is simply computed again.
func OpenSumCache(dir string) *SumCache {
	return &SumCache{sums: map[fileID][32]byte{}, dir: dir}
}

// File is the SHA-256 of the file at path, which info (its stat)
// describes, and its length: the sum known for info, else the file
// hashed as it is read, and remembered when its size is still info's.
// A nil *SumCache hashes every time.
func (c *SumCache) File(path string, info fs.FileInfo) (sum [32]byte, n int64, err error) {
	if sum, ok := c.Lookup(info); ok {
		return sum, info.Size(), nil
	}
	buf := c.buffer()
	defer c.release(buf)
	if sum, n, err = sumFile(path, *buf); err == nil && n == info.Size() {
		c.Store(info, sum)
	}
	return sum, n, err
}

// buffer is a read buffer for File: a plan is a short process that pays
// for every fresh page, and io.Copy would take a new one per file.
func (c *SumCache) buffer() *[]byte {
	if c != nil {
		if b, ok := c.bufs.Get().(*[]byte); ok {
			return b
		}
	}
	return new(make([]byte, 32<<10)) // io.Copy's size: 64 KiB hashed 3% faster, for 8 more fresh pages
}

func (c *SumCache) release(b *[]byte) {
	if c != nil {
		c.bufs.Put(b)
	}
}

// sumFile is the SHA-256 of a file's content and its length, read
// through buf.
func sumFile(path string, buf []byte) (sum [32]byte, n int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return sum, 0, err
	}
	defer f.Close()
	h := sha256.New()
	// Only the Reader: an *os.File's WriteTo would not use buf.
	if n, err = io.CopyBuffer(h, struct{ io.Reader }{f}, buf); err != nil {
		return sum, 0, err
	}
	h.Sum(sum[:0])
	return sum, n, nil
}

// Lookup returns the sum of the file info describes, if known.
func (c *SumCache) Lookup(info fs.FileInfo) ([32]byte, bool) {
	id, ok := identity(info)
	if c == nil || !ok {
		return [32]byte{}, false
	}
	c.mu.Lock()
	sum, ok := c.sums[id]
	c.mu.Unlock()
	if ok || c.dir == "" || info.Size() < keptFrom {
		return sum, ok
	}
	f, err := os.Open(filepath.Join(c.dir, id.String()))
	if err != nil {
		return sum, false
	}
	defer f.Close()
	if _, err := io.ReadFull(f, sum[:]); err != nil {
		return sum, false
	}
	cachetrim.Used(f, time.Now())
	c.mu.Lock()
	c.sums[id] = sum
	c.mu.Unlock()
	return sum, true
}

// Store records sum as the content's of the file info describes.
func (c *SumCache) Store(info fs.FileInfo, sum [32]byte) {
	id, ok := identity(info)
	if c == nil || !ok {
		return
	}
	c.mu.Lock()
	c.sums[id] = sum
	c.mu.Unlock()
	if c.dir != "" && info.Size() >= keptFrom {
		c.save(id, sum)
	}
}

// save writes a sum under its identity whole or not at all (a temporary
// file renamed), so that a reader never takes half of one.
func (c *SumCache) save(id fileID, sum [32]byte) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(c.dir, ".sum-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(sum[:])
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(c.dir, id.String())) != nil {
		os.Remove(tmp.Name())
	}
}
