//go:build unix

package local

import (
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// diskUsage is the space a file really occupies (st_blocks × 512).
func diskUsage(t *testing.T, path string) (int64, bool) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int64(st.Blocks) * 512, true
}
