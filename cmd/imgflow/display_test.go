package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dirSnapshot is every entry under dir with its mode and content hash.
func dirSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			v += " " + hex.EncodeToString(sum[:])
		}
		out[rel] = v
		return nil
	}))
	return out
}

// Display commands never change the state directory, not even one whose
// state names a blob file that is not there (a renamed blob key: the data
// of the old key looks unreferenced, and opening the state for a change
// would remove it).
func TestDisplayCommandsLeaveTheStateDirByteIdentical(t *testing.T) {
	state := t.TempDir()
	require.Equal(t, 0, runFlatcar(t, state).code)
	path := filepath.Join(state, "state.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	key := `"flatcar-linux-` + flatcarVersion + `-stable-amd64.vhd": {`
	require.True(t, strings.Contains(string(data), key), "the state holds the uploaded blob")
	renamed := strings.Replace(string(data), key, `"renamed.vhd": {`, 1)
	require.NoError(t, os.WriteFile(path, []byte(renamed), 0o600))
	// What a killed process leaves: a state save's temp file.
	require.NoError(t, os.WriteFile(filepath.Join(state, ".state-123.json"), []byte("{"), 0o600))
	before := dirSnapshot(t, state)

	root := repoRoot(t)
	for _, args := range [][]string{
		{"state", "--state", state},
		{"state", "--state", state, "--output", "json"},
		{"runs", "--state", state},
		{"runs", "--state", state, "--output", "json"},
		{"plan", "--root", root, filepath.Join(root, "workflows", "flatcar.star"), "--state", state,
			"--var", "version=" + flatcarVersion, "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd"},
	} {
		res := imgflow(t, args...)
		require.Equal(t, 0, res.code, "%v: %s", args, res)
		assert.Equal(t, before, dirSnapshot(t, state), "imgflow %s changed the state directory", strings.Join(args[:1], " "))
	}

	// A state directory that does not exist is not created either.
	missing := filepath.Join(t.TempDir(), "none")
	require.Equal(t, 0, imgflow(t, "state", "--state", missing).code)
	require.Equal(t, 0, imgflow(t, "plan", "--root", root, filepath.Join(root, "workflows", "flatcar.star"), "--state", missing,
		"--var", "version="+flatcarVersion, "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd").code)
	assert.NoDirExists(t, missing)
}
