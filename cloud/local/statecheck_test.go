package local

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/cloudtest"
)

// populatedStateDoc is the state.json of a directory holding one of
// everything populate makes, decoded as generic JSON to be corrupted.
func populatedStateDoc(t *testing.T) map[string]any {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	p, err := Open(dir, testOptions())
	require.NoError(t, err)
	populate(t, &fixture{p: p, sub: p.SubscriptionID()})
	require.NoError(t, p.Close())
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	return doc
}

// setAt sets the value at a path of object keys in doc, creating the
// objects on the way.
func setAt(doc map[string]any, value any, path ...string) {
	m := doc
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

// openCorrupted writes contents as state.json of a new directory and opens
// it; the file must be left as it was.
func openCorrupted(t *testing.T, contents []byte) error {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	require.NoError(t, os.WriteFile(path, contents, 0o644))
	var p *Provider
	var err error
	require.NotPanics(t, func() { p, err = Open(dir, testOptions()) })
	if err == nil {
		p.Close()
		return nil
	}
	after, rerr := os.ReadFile(path)
	require.NoError(t, rerr)
	assert.Equal(t, string(contents), string(after), "a refused state file is not rewritten")
	assert.Contains(t, err.Error(), path, "the error names the file")
	// The directory lock is released: a fixed file can be opened at once.
	q, lerr := Open(t.TempDir(), testOptions())
	require.NoError(t, lerr)
	q.Close()
	return err
}

func TestOpenRefusesNullEntriesNamingThem(t *testing.T) {
	rg := []string{"resource_groups", "rg1"}
	gal := append(rg[:2:2], "galleries", "gal1")
	def := append(gal[:4:4], "definitions", "flatcar-stable")
	account := append(rg[:2:2], "storage_accounts", "imgflowstore")
	container := append(account[:4:4], "containers", "vhds")
	for _, tc := range []struct {
		path []string
		want string
	}{
		{rg, `resource_groups["rg1"]: null`},
		{gal, `resource_groups["rg1"].galleries["gal1"]: null`},
		{def, `resource_groups["rg1"].galleries["gal1"].definitions["flatcar-stable"]: null`},
		{append(def, "versions", "1.0.0"), `resource_groups["rg1"].galleries["gal1"].definitions["flatcar-stable"].versions["1.0.0"]: null`},
		{append(rg[:2:2], "images", "img"), `resource_groups["rg1"].images["img"]: null`},
		{append(rg[:2:2], "disks", "disk1"), `resource_groups["rg1"].disks["disk1"]: null`},
		{append(rg[:2:2], "disk_grants", "disk1"), `resource_groups["rg1"].disk_grants["disk1"]: null`},
		{account, `resource_groups["rg1"].storage_accounts["imgflowstore"]: null`},
		{container, `resource_groups["rg1"].storage_accounts["imgflowstore"].containers["vhds"]: null`},
		{append(container, "blobs", "flatcar.vhd"), `resource_groups["rg1"].storage_accounts["imgflowstore"].containers["vhds"].blobs["flatcar.vhd"]: null`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			doc := populatedStateDoc(t)
			setAt(doc, nil, tc.path...)
			data, err := json.Marshal(doc)
			require.NoError(t, err)
			err = openCorrupted(t, data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "state.json: "+tc.want+": fix or remove that entry")
		})
	}
}

func TestOpenRefusesWrongTypedEntriesNamingThem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		path  []string
		want  string
	}{
		{"entry is a string", "gal1", []string{"resource_groups", "rg1", "galleries", "gal1"},
			`resource_groups["rg1"].galleries["gal1"]: "gal1", want an object`},
		{"entry is an array", []any{}, []string{"resource_groups", "rg1"},
			`resource_groups["rg1"]: [], want an object`},
		{"collection is an array", []any{"v"}, []string{"resource_groups", "rg1", "galleries", "gal1", "definitions", "flatcar-stable", "versions"},
			`resource_groups["rg1"].galleries["gal1"].definitions["flatcar-stable"].versions: ["v"], want an object of entries by name`},
		{"field of a leaf", "big", []string{"resource_groups", "rg1", "storage_accounts", "imgflowstore", "containers", "vhds", "blobs", "flatcar.vhd", "size"},
			`resource_groups["rg1"].storage_accounts["imgflowstore"].containers["vhds"].blobs["flatcar.vhd"].size: "big", want int64`},
		{"field of a group", 7, []string{"resource_groups", "rg1", "location"},
			`resource_groups["rg1"].location: 7, want string`},
		{"field of the file", 7, []string{"subscription_id"},
			`subscription_id: 7, want string`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := populatedStateDoc(t)
			setAt(doc, tc.value, tc.path...)
			data, err := json.Marshal(doc)
			require.NoError(t, err)
			err = openCorrupted(t, data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "state.json: "+tc.want)
		})
	}
}

func TestOpenRefusesAStateFileThatIsNotAnObject(t *testing.T) {
	err := openCorrupted(t, []byte("[1, 2]\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "state.json: top level: [1, 2], want an object")

	err = openCorrupted(t, []byte("{\n  \"format\": 1,\n  \"subscription_id\": \"s\",\n}\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "state.json: line 4: invalid character '}'")
}

func TestOpenAcceptsNullCollections(t *testing.T) {
	doc := populatedStateDoc(t)
	setAt(doc, nil, "resource_groups", "rg1", "disks")
	setAt(doc, nil, "resource_groups", "rg1", "galleries", "gal1", "definitions", "flatcar-stable", "versions")
	data, err := json.Marshal(doc)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), data, 0o644))
	p, err := Open(dir, testOptions())
	require.NoError(t, err, "a null collection is an empty one")
	defer p.Close()
	_, err = p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	cloudtest.RequireError(t, err, 404, "ResourceNotFound")
}
