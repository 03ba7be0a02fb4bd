package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An imgflow command ends by trimming its caches: what they have not used
// for days goes, in each of the three, and nothing else in the directory
// (IMGFLOW_CACHE_DIR may name one that holds more).
func TestTrimCachesTrimsEachCacheAndNothingElse(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cacheDirEnv, dir)
	now := time.Now()
	long := now.Add(-cachetrim.MaxAge - time.Hour)
	write := func(rel string) string {
		path := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
		require.NoError(t, os.Chtimes(path, long, long))
		return path
	}
	var stale []string
	for _, cache := range []string{starlarkCache, sumsCache, validateCache} {
		stale = append(stale, write(filepath.Join(cache, "entry")))
	}
	users := write(filepath.Join("notes", "entry"))

	trimCaches(now)

	for _, path := range stale {
		assert.NoFileExists(t, path)
	}
	assert.FileExists(t, users)
}
