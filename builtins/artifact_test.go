package builtins_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArtifactWritesJSONInDictOrderAndStringsAsIs(t *testing.T) {
	s := newSnippetSandbox(t)
	s.artifacts = filepath.Join(t.TempDir(), "out") // created when missing
	res := s.mustRun(`
info = artifact("vhd-publishing-info.json", content = {"vhd_url": "https://a.blob.core.windows.net/vhds/x.vhd", "os_name": "Linux", "n": 2, "list": ["<b>", True, None], "empty": {}})
notes = artifact("release-notes.txt", content = "line 1\nline 2\n")
output("path", info.path)
output("size", notes.size)
`, nil)
	data, err := os.ReadFile(filepath.Join(s.artifacts, "vhd-publishing-info.json"))
	require.NoError(t, err)
	assert.Equal(t, `{
    "vhd_url": "https://a.blob.core.windows.net/vhds/x.vhd",
    "os_name": "Linux",
    "n": 2,
    "list": [
        "<b>",
        true,
        null
    ],
    "empty": {}
}
`, string(data), "keys in insertion order, 4-space indent, no HTML escaping")
	notes, err := os.ReadFile(filepath.Join(s.artifacts, "release-notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "line 1\nline 2\n", string(notes))

	out := outputsOf(res)
	assert.Equal(t, filepath.Join(s.artifacts, "vhd-publishing-info.json"), out["path"])
	assert.Equal(t, int64(len(notes)), out["size"])
	require.Len(t, res.Artifacts, 2)
	sum := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), res.Artifacts[0].SHA256)
	assert.Equal(t, "main.star:2:16", res.Artifacts[0].Pos)
	assert.Equal(t, []string{"release-notes.txt", "vhd-publishing-info.json"}, dirNames(t, s.artifacts), "no temporary file is left")
}

func TestArtifactKeepsAnIdenticalFileAndNeverOverwritesAnother(t *testing.T) {
	s := newSnippetSandbox(t)
	s.artifacts = t.TempDir()
	const src = `artifact("notes.txt", content = "v1\n")`
	s.mustRun(src, nil)
	s.mustRun(src, nil) // a rerun (or resume) writes the same content: fine

	path := filepath.Join(s.artifacts, "notes.txt")
	require.NoError(t, os.WriteFile(path, []byte("the user's notes\n"), 0o644))
	msg := s.mustFail(src, nil)
	assert.Contains(t, msg, path+" already exists with other content and is not overwritten")
	assert.Contains(t, msg, "main.star:1:")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "the user's notes\n", string(data))
}

func TestArtifactRefusesBadNamesDuplicatesAndSecrets(t *testing.T) {
	s := newSnippetSandbox(t)
	s.artifacts = t.TempDir()
	for src, want := range map[string]string{
		`artifact("../x.json", content = "x")`:                                       `invalid name "../x.json"`,
		`artifact("logs/build.log", content = "x")`:                                  `invalid name "logs/build.log"`,
		`artifact(".hidden", content = "x")`:                                         `invalid name ".hidden"`,
		"artifact(\"a.txt\", content = \"1\")\nartifact(\"a.txt\", content = \"2\")": "artifact a.txt is already written at main.star:1:",
		`artifact("token.txt", content = {"t": secret("token")})`:                    "a secret() cannot be written",
		`artifact("x.json", content = {1: "one"})`:                                   "JSON object keys are strings",
	} {
		t.Setenv("IMGFLOW_SECRET_TOKEN", "s3cr3t")
		msg := s.mustFail(src, nil)
		assert.Contains(t, msg, want, src)
		assert.NotContains(t, msg, "s3cr3t")
	}
	assert.Empty(t, dirNames(t, s.artifacts), "a refused run writes nothing: the errors come from the validation pass")
}

func TestArtifactWithoutADirectoryIsRecordedOnly(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`a = artifact("x.txt", content = "x")
output("path", a.path)`, nil)
	assert.Nil(t, outputsOf(res)["path"])
	require.Len(t, res.Artifacts, 1)
	assert.Equal(t, "", res.Artifacts[0].Path)
	assert.Equal(t, 1, res.Artifacts[0].Size)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// An artifact is published: a SAS signature, a URL password or a
// secret()'s value in its content (what a check printed, a URL) is
// redacted, in the file and its checksum.
func TestArtifactContentIsRedacted(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_PLANTED", "planted-artifact-secret")
	s := newSnippetSandbox(t)
	s.artifacts = t.TempDir()
	res := s.mustRun(`
artifact("scan.txt", content = "fetched https://a.blob.core.windows.net/c/x.tgz?sv=1&sig=PLANTEDSIG from https://u:PLANTEDPW@mirror.example.org/x; token planted-artifact-secret\n")
artifact("info.json", content = {"url": "https://a.blob.core.windows.net/c/y.vhd?sv=1&sig=PLANTEDSIG"})
`, nil)
	scan, err := os.ReadFile(filepath.Join(s.artifacts, "scan.txt"))
	require.NoError(t, err)
	assert.Equal(t, "fetched https://a.blob.core.windows.net/c/x.tgz?<redacted> from https://u:<redacted>@mirror.example.org/x; token <secret>\n", string(scan))
	info, err := os.ReadFile(filepath.Join(s.artifacts, "info.json"))
	require.NoError(t, err)
	assert.Contains(t, string(info), `"url": "https://a.blob.core.windows.net/c/y.vhd?<redacted>"`)
	require.Len(t, res.Artifacts, 2)
	sum := sha256.Sum256(scan)
	assert.Equal(t, hex.EncodeToString(sum[:]), res.Artifacts[0].SHA256, "the checksum is of the file written")
}
