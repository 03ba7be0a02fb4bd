package builtins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/internal/redact"
)

// Artifact is a file a run wrote for the steps after it (publishing info,
// release notes, build logs): named, with where it went and what it holds.
type Artifact struct {
	Name string `json:"name"`
	// Path is the file, absolute; "" when the run has no artifacts
	// directory (tests) or wrote nothing (validation pass, plan).
	Path   string `json:"path,omitempty"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	Pos    string `json:"pos"`
}

// isArtifactName: a plain file name, no directories, nothing hidden.
func isArtifactName(s string) bool { return isPlainName(s, 128, "._-") }

func registerArtifacts(r *Registry) {
	r.add("Artifacts",
		&Spec{
			Name: "artifact", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "the file name, e.g. `vhd-publishing-info.json`: letters, digits, `.`, `-`, `_`; one per run"},
				{Name: "content", Kind: KindAny, Doc: "a string, written as is, or a JSON-like value (dict, list, struct …), written as JSON indented by 4 spaces with dict keys in their order"},
			},
			Returns: "struct(name, path, size, sha256)",
			Doc: "Writes a file for the steps after the run (what a release pipeline publishes) into the artifacts directory: " +
				"`imgflow run --artifacts DIR`, by default `.imgflow/artifacts/<run id>/`. The run lists its artifacts after its outputs, " +
				"in `--output json` and in `imgflow runs --output json`. Nothing is written in the validation pass or a plan (`path` is then None, as in `imgflow test`, which writes no files). " +
				"An existing file with the same content is left as it is (a resumed run writes the same files); one with other content " +
				"is never overwritten: the run fails naming it. A secret() cannot be written; a SAS signature, URL password or secret value in the content is redacted.",
			Example: `artifact("vhd-publishing-info.json", content = {"vhd_url": exported.url, "os_name": "Linux"})`,
			Impl:    artifactImpl,
		},
	)
}

func artifactImpl(c *Call) (starlark.Value, error) {
	name := c.String("name", "")
	if !isArtifactName(name) {
		return nil, fmt.Errorf("artifact: invalid name %q: use a file name of letters, digits, '.', '-' and '_', e.g. %q", name, "release-notes.txt")
	}
	content := c.Value("content")
	if containsSecret(content) {
		return nil, fmt.Errorf("artifact %s: artifacts are files others read; a secret() cannot be written to one", name)
	}
	data, err := artifactBytes(content)
	if err != nil {
		return nil, fmt.Errorf("artifact %s: %w", name, err)
	}
	// What a check printed or a URL may carry a SAS signature, a URL
	// password or a secret()'s value: an artifact is published, so they
	// go, as from every output.
	data = []byte(redact.Text(string(data), redact.SecretValues(os.Environ())))
	sum := sha256.Sum256(data)
	a := Artifact{Name: name, Size: len(data), SHA256: hex.EncodeToString(sum[:]), Pos: c.Pos()}
	if dir := c.Run.ArtifactsDir; dir != "" && !c.Run.Validating {
		a.Path = filepath.Join(dir, name)
	}
	if err := c.Run.addArtifact(a); err != nil {
		return nil, err
	}
	if a.Path != "" {
		if err := writeArtifact(a.Path, data); err != nil {
			return nil, fmt.Errorf("artifact %s: %w", name, err)
		}
	}
	var path any
	if a.Path != "" {
		path = a.Path
	}
	return makeStruct("artifact", fields{"name": name, "path": path, "size": a.Size, "sha256": a.SHA256}), nil
}

// writeArtifact writes data to path through a file that has no name
// until it is complete, so neither a crash nor a kill leaves a
// half-written artifact or a temporary file. A file already there is kept
// when it holds data and refused otherwise.
func writeArtifact(path string, data []byte) error {
	return writeArtifactFile(path, data, nil)
}

// writeArtifactFile is writeArtifact; beforeLink, when not nil, runs once
// the data is written, before the file gets path (tests look at the
// directory then).
func writeArtifactFile(path string, data []byte, beforeLink func()) error {
	if old, err := os.ReadFile(path); err == nil {
		if bytes.Equal(old, data) {
			return nil
		}
		return fmt.Errorf("%s already exists with other content and is not overwritten: remove it, or pass another --artifacts directory", path)
	} else if !os.IsNotExist(err) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if done, err := writeUnnamed(dir, path, data, beforeLink); done {
		return err
	}
	// No unnamed files here: a temporary one, renamed (a kill in between
	// leaves it, named .NAME.*).
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone after the rename; removes it on failure
	if err := writeAll(f, data); err != nil {
		return err
	}
	if beforeLink != nil {
		beforeLink()
	}
	return os.Rename(f.Name(), path)
}

// writeAll writes data to f, makes it world-readable (an artifact is for
// others) and closes it.
func writeAll(f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// artifactBytes is a string's bytes, or a JSON-like value as indented JSON
// with a final newline.
func artifactBytes(v starlark.Value) ([]byte, error) {
	if s, ok := v.(starlark.String); ok {
		return []byte(s), nil
	}
	var b bytes.Buffer
	if err := encodeOrdered(&b, v, ""); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// encodeOrdered writes v as JSON indented by 4 spaces, dict keys in their
// insertion order (go.starlark.net's json.encode sorts them) and struct
// fields sorted, strings without HTML escaping.
func encodeOrdered(b *bytes.Buffer, v starlark.Value, indent string) error {
	inner := indent + "    "
	switch v := v.(type) {
	case starlark.NoneType:
		b.WriteString("null")
	case starlark.Bool, starlark.Int, starlark.Float, starlark.String:
		g, err := ToGo(v)
		if err != nil {
			return err
		}
		return writeJSONScalar(b, g)
	case *starlark.Dict:
		items := v.Items()
		keys := make([]string, len(items))
		values := make([]starlark.Value, len(items))
		for i, kv := range items {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return fmt.Errorf("dict key %s is a %s: JSON object keys are strings", kv[0], kv[0].Type())
			}
			keys[i], values[i] = string(k), kv[1]
		}
		return encodeObject(b, keys, values, indent)
	case *starlarkstruct.Struct:
		names := v.AttrNames()
		sort.Strings(names)
		values := make([]starlark.Value, len(names))
		for i, n := range names {
			values[i], _ = v.Attr(n)
		}
		return encodeObject(b, names, values, indent)
	case starlark.Indexable: // list, tuple
		if v.Len() == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[\n")
		for i := 0; i < v.Len(); i++ {
			b.WriteString(inner)
			if err := encodeOrdered(b, v.Index(i), inner); err != nil {
				return err
			}
			if i < v.Len()-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	default:
		return fmt.Errorf("a %s cannot be written as JSON: use a string, number, bool, list, dict or struct", v.Type())
	}
	return nil
}

func encodeObject(b *bytes.Buffer, keys []string, values []starlark.Value, indent string) error {
	if len(keys) == 0 {
		b.WriteString("{}")
		return nil
	}
	inner := indent + "    "
	b.WriteString("{\n")
	for i, k := range keys {
		b.WriteString(inner)
		if err := writeJSONScalar(b, k); err != nil {
			return err
		}
		b.WriteString(": ")
		if err := encodeOrdered(b, values[i], inner); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + "}")
	return nil
}

func writeJSONScalar(b *bytes.Buffer, v any) error {
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Write(bytes.TrimRight(tmp.Bytes(), "\n"))
	return nil
}
