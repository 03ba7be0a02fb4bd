package localsim

import (
	"io/fs"
	"sync"
)

// SumCache remembers the SHA-256 of large staged files by their identity
// on disk (device, inode, size, modification time), so that the builds of
// one process that stage the same build tools (hard links to the
// workspace's files, see builtins' stageUploads) hash them once: `imgflow
// test` simulates about a hundred builds of the same tools. A nil
// *SumCache caches nothing; where the platform gives no file identity,
// nothing is cached either.
type SumCache struct {
	mu   sync.Mutex
	sums map[fileID][32]byte
}

// NewSumCache returns an empty cache, safe for concurrent use.
func NewSumCache() *SumCache { return &SumCache{sums: map[fileID][32]byte{}} }

func (c *SumCache) lookup(info fs.FileInfo) ([32]byte, bool) {
	id, ok := identity(info)
	if c == nil || !ok {
		return [32]byte{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sum, ok := c.sums[id]
	return sum, ok
}

func (c *SumCache) store(info fs.FileInfo, sum [32]byte) {
	id, ok := identity(info)
	if c == nil || !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sums[id] = sum
}
