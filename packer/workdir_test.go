package packer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A build's own directory reads as the checkout (every entry a link), and
// what the build writes, even below a directory of the checkout, lands in
// it, never in the checkout.
func TestMirrorWorkDirLinksTheCheckoutAndKeepsWritesOwn(t *testing.T) {
	src := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(src, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("vhdbuilder/packer/t.json", "{}")
	write("vhdbuilder/notice.txt", "notice")
	write("parts/linux/a.sh", "a")
	write("image-bom.json", "the checkout's own")

	dir := t.TempDir()
	require.NoError(t, MirrorWorkDir(src, dir, []string{"image-bom.json", "vhdbuilder/out/x.log", "new/y.txt"}))

	for rel, want := range map[string]string{"vhdbuilder/packer/t.json": "{}", "vhdbuilder/notice.txt": "notice", "parts/linux/a.sh": "a"} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		require.NoError(t, err, rel)
		assert.Equal(t, want, string(data), rel)
	}
	assert.NoFileExists(t, filepath.Join(dir, "image-bom.json"), "an owned path is left for the build")
	info, err := os.Lstat(filepath.Join(dir, "vhdbuilder"))
	require.NoError(t, err)
	assert.True(t, info.IsDir(), "a directory on an owned path's way is real")
	info, err = os.Lstat(filepath.Join(dir, "parts"))
	require.NoError(t, err)
	assert.Equal(t, os.ModeSymlink, info.Mode()&os.ModeSymlink, "the rest is linked")

	// The build writes its downloads: the checkout is untouched.
	for _, rel := range []string{"image-bom.json", "vhdbuilder/out/x.log", "new/y.txt"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("downloaded"), 0o644))
	}
	data, err := os.ReadFile(filepath.Join(src, "image-bom.json"))
	require.NoError(t, err)
	assert.Equal(t, "the checkout's own", string(data))
	assert.NoDirExists(t, filepath.Join(src, "vhdbuilder", "out"))
	assert.NoDirExists(t, filepath.Join(src, "new"))

	require.NoError(t, os.RemoveAll(dir))
	assert.FileExists(t, filepath.Join(src, "vhdbuilder", "packer", "t.json"), "removing the mirror leaves the checkout")
}

func TestMirrorWorkDirRefusesAPathOutside(t *testing.T) {
	for _, p := range []string{"../x", "/etc/x", "."} {
		assert.Error(t, MirrorWorkDir(t.TempDir(), t.TempDir(), []string{p}), p)
	}
}

// An unmirrored request reads every path as its mirror would show it:
// an own path in the build's directory, the rest in the checkout, and a
// directory that would mix the two is refused (ErrNeedsMirror) rather
// than read from one side.
func TestReadPathReadsAsTheMirrorWould(t *testing.T) {
	src := t.TempDir()
	write := func(root, rel, content string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write(src, "vhdbuilder/packer/t.json", "{}")
	write(src, "vhdbuilder/notice.txt", "notice")
	write(src, "image-bom.json", "the checkout's own")
	write(src, "parts/a.sh", "a")
	own := []string{"image-bom.json", "vhdbuilder/out/x.log", "parts/pending.sh"}

	mirrored := t.TempDir()
	require.NoError(t, MirrorWorkDir(src, mirrored, own))
	unmirrored := t.TempDir()
	require.NoError(t, CheckOwn(src, own))
	for _, dir := range []string{mirrored, unmirrored} {
		write(dir, "image-bom.json", "downloaded")
		write(dir, "vhdbuilder/out/x.log", "log")
		write(dir, "parts/pending.sh", "stand-in")
	}

	req := BuildRequest{WorkDir: unmirrored, Mirrors: src, Unmirrored: true, Own: own}
	through := BuildRequest{WorkDir: mirrored, Mirrors: src}
	for _, rel := range []string{"vhdbuilder/packer/t.json", "vhdbuilder/notice.txt", "image-bom.json", "vhdbuilder/out/x.log", "./vhdbuilder/../parts/a.sh", "parts/pending.sh"} {
		p, err := req.ReadPath(rel)
		require.NoError(t, err, rel)
		got, err := os.ReadFile(p)
		require.NoError(t, err, rel)
		m, err := through.ReadPath(rel)
		require.NoError(t, err)
		want, err := os.ReadFile(m)
		require.NoError(t, err, rel)
		assert.Equal(t, string(want), string(got), rel)
	}
	for _, rel := range []string{".", "parts", "vhdbuilder/out/../../parts"} {
		_, err := req.ReadPath(rel)
		assert.ErrorIs(t, err, ErrNeedsMirror, rel)
		_, err = through.ReadPath(rel)
		assert.NoError(t, err, "the mirror shows both sides: %s", rel)
	}
	abs := filepath.Join(src, "parts", "a.sh")
	p, err := req.ReadPath(abs)
	require.NoError(t, err)
	assert.Equal(t, abs, p)
	assert.Error(t, CheckOwn(src, []string{"../x"}), "own paths are checked as for the mirror")
}
