//go:build unix

package packer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/testutil"
)

const checkoutFixture = "../testdata/packer/checkout"

// checkoutTree maps every file under dir to its content.
func checkoutTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return out
}

// Two parallel real packer builds of a checkout template that writes
// relative files, each in a mirror of the checkout: each build has its
// own files, the checkout's files are read through the mirror, and the
// checkout is untouched.
func TestRealPackerParallelBuildsWriteInTheirOwnDirectories(t *testing.T) {
	requirePacker(t)
	before := checkoutTree(t, checkoutFixture)
	dirs := map[string]string{"a": t.TempDir(), "b": t.TempDir()}
	var wg sync.WaitGroup
	errs := map[string]error{}
	var mu sync.Mutex
	for tag, dir := range dirs {
		require.NoError(t, MirrorWorkDir(checkoutFixture, dir, []string{"image-bom.json", "logs/build.log", "provision-copy.sh"}))
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &testutil.SyncBuffer{}
			_, err := realRunner(out).Build(context.Background(), BuildRequest{
				TemplatePath: "vhdbuilder/packer/null-checkout.json", WorkDir: dir, Vars: map[string]string{"tag": tag}, Only: []string{"run"},
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[tag] = err
			}
		}()
	}
	wg.Wait()
	require.Empty(t, errs)
	for tag, dir := range dirs {
		bom, err := os.ReadFile(filepath.Join(dir, "image-bom.json"))
		require.NoError(t, err, tag)
		assert.Equal(t, `{"tag": "`+tag+`"}`+"\n", string(bom))
		log, err := os.ReadFile(filepath.Join(dir, "logs", "build.log"))
		require.NoError(t, err, tag)
		assert.Equal(t, tag+"\n", string(log))
		copied, err := os.ReadFile(filepath.Join(dir, "provision-copy.sh"))
		require.NoError(t, err, tag)
		assert.Equal(t, before["parts/linux/provision.sh"], string(copied), "a checkout file, read from the mirror")
	}
	assert.Equal(t, before, checkoutTree(t, checkoutFixture), "the checkout is untouched")
}

// packer validate refuses an upload source the checkout lacks with the
// words imgflow's own check uses (Upload.BadSource), and accepts the
// template once the build's directory has the file.
func TestRealPackerValidateRefusesAMissingUploadSource(t *testing.T) {
	requirePacker(t)
	dir := t.TempDir()
	require.NoError(t, MirrorWorkDir(checkoutFixture, dir, []string{"image-bom.json", "tools/bin/lister"}))
	req := BuildRequest{TemplatePath: "vhdbuilder/packer/null-checkout.json", WorkDir: dir, Vars: map[string]string{"tag": "a"}}
	err := realRunner(&testutil.SyncBuffer{}).Validate(context.Background(), req)
	require.Error(t, err)
	tpl, lerr := LoadTemplate(filepath.Join(checkoutFixture, "vhdbuilder", "packer", "null-checkout.json"))
	require.NoError(t, lerr)
	var lister Upload
	for _, u := range tpl.Uploads() {
		if u.Source == "tools/bin/lister" {
			lister = u
		}
	}
	ours := lister.BadSource(dir)
	require.Error(t, ours)
	// packer wraps its error lines.
	assert.Contains(t, strings.Join(strings.Fields(err.Error()), " "), ours.Error(), "imgflow says what packer says")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "tools", "bin", "lister"), nil, 0o644))
	assert.NoError(t, realRunner(&testutil.SyncBuffer{}).Validate(context.Background(), req))
	assert.NoFileExists(t, filepath.Join(checkoutFixture, "tools", "bin", "lister"))
}
