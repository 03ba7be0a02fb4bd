package packer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUploadsAreTheSourcesPackerChecks(t *testing.T) {
	tpl, err := ParseTemplate([]byte(`{"builders": [{"type": "null", "name": "a"}, {"type": "null", "name": "b"}], "provisioners": [
		{"type": "file", "source": "parts/a.sh", "destination": "/home/packer/a.sh"},
		{"type": "file", "direction": "upload", "sources": ["x", "y"], "destination": "/home/packer/", "only": ["b"]},
		{"type": "file", "source": "gen/tool", "destination": "/home/packer/tool", "generated": true},
		{"type": "file", "source": "{{user ` + "`dir`" + `}}/x", "destination": "/home/packer/x"},
		{"type": "file", "direction": "download", "source": "/x", "destination": "x"},
		{"type": "shell", "inline": ["true"]}
	]}`))
	require.NoError(t, err)
	got := tpl.Uploads()
	assert.Equal(t, []Upload{
		{Provisioner: 1, Source: "parts/a.sh"},
		{Provisioner: 2, Source: "x", Only: []string{"b"}},
		{Provisioner: 2, Source: "y", Only: []string{"b"}},
	}, got)
	assert.True(t, got[1].AppliesTo([]string{"a", "b"}))
	assert.False(t, got[1].AppliesTo([]string{"a"}))

	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "parts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "parts", "a.sh"), nil, 0o644))
	assert.NoError(t, got[0].BadSource(dir))
	err = got[1].BadSource(dir)
	require.Error(t, err)
	assert.Equal(t, "Bad source 'x': stat x: no such file or directory", err.Error(), "packer 1.9.5's words")
}
