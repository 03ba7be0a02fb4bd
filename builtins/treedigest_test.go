package builtins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// treeDigest hashes each file's path, mode, size and content in walk
// order (the format keys the validation cache: it must not drift), reads
// a linked file's target, and tells apart same-size edits and modes.
func TestTreeDigestIsThePathsModesSizesAndContents(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "home", "packer"), 0o755))
	tools := bytes.Repeat([]byte("build tools "), 20000) // larger than the read buffer
	require.NoError(t, os.WriteFile(filepath.Join(dir, "home", "packer", "tools"), tools, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.sh"), []byte("echo a\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a.sh"), filepath.Join(dir, "b.sh")))

	want := sha256.New()
	fmt.Fprintf(want, "a.sh 644 7\necho a\n")
	fmt.Fprintf(want, "b.sh 777 7\necho a\n") // a link's own mode, its target's bytes
	fmt.Fprintf(want, "home/packer/tools 755 %d\n", len(tools))
	want.Write(tools)
	got, err := treeDigest(dir)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(want.Sum(nil)), got)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.sh"), []byte("echo b\n"), 0o644))
	edited, err := treeDigest(dir)
	require.NoError(t, err)
	assert.NotEqual(t, got, edited, "a same-size edit changes the digest")
	require.NoError(t, os.Chmod(filepath.Join(dir, "a.sh"), 0o755))
	chmodded, err := treeDigest(dir)
	require.NoError(t, err)
	assert.NotEqual(t, edited, chmodded, "a mode changes the digest")
}
