package local

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/faults"
)

// deletable is a resource with a data file and how to delete and get it.
type deletable struct {
	name   string
	file   func(f *fixture) string
	delete func(f *fixture) error
	get    func(p *Provider) error
}

func deletables() []deletable {
	return []deletable{
		{"blob",
			func(f *fixture) string { return f.p.blobFile(account, "vhds", "flatcar.vhd") },
			func(f *fixture) error { return f.p.DeleteBlob(ctx, f.vhd) },
			func(p *Provider) error {
				_, err := p.GetBlob(ctx, cloud.BlobRef{Account: account, Container: "vhds", Name: "flatcar.vhd"})
				return err
			}},
		{"image version",
			func(f *fixture) string {
				return f.p.dataFile(cloud.ImageVersionID(f.sub, rgName, galName, defName, "1.0.0"))
			},
			func(f *fixture) error { return f.p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0") },
			func(p *Provider) error {
				_, err := p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
				return err
			}},
		{"managed image",
			func(f *fixture) string { return f.p.dataFile(cloud.ManagedImageID(f.sub, rgName, "img")) },
			func(f *fixture) error { return f.p.DeleteManagedImage(ctx, rgName, "img") },
			func(p *Provider) error {
				_, err := p.GetManagedImage(ctx, rgName, "img")
				return err
			}},
		{"disk",
			func(f *fixture) string { return f.p.dataFile(cloud.DiskID(f.sub, rgName, "export")) },
			func(f *fixture) error { return f.p.DeleteDisk(ctx, rgName, "export") },
			func(p *Provider) error {
				_, err := p.GetDisk(ctx, rgName, "export")
				return err
			}},
	}
}

// persistedFixture opens a state directory holding one of everything,
// plus a disk made from the image version.
func persistedFixture(t *testing.T) (dir string, f *fixture) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "state")
	p, err := Open(dir, testOptions())
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	f = &fixture{p: p, sub: p.SubscriptionID()}
	populate(t, f)
	_, err = p.CreateDiskFromImageVersion(ctx, diskFrom(f, "export", "1.0.0"))
	require.NoError(t, err)
	return dir, f
}

// A crash between the two halves of a delete leaves a data file nothing
// refers to, never a resource whose data is gone.
func TestADeleteSavesTheStateBeforeRemovingTheData(t *testing.T) {
	for _, d := range deletables() {
		t.Run(d.name, func(t *testing.T) {
			dir, f := persistedFixture(t)
			file := d.file(f)
			require.FileExists(t, file)
			var removing string
			f.p.files.beforeRemoval = func(path string) error {
				removing = path
				return faults.ErrCrash
			}
			require.ErrorIs(t, d.delete(f), faults.ErrCrash)
			assert.Equal(t, file, removing)
			assert.FileExists(t, file, "the crash came before the data file went")
			saved, _, err := loadState(filepath.Join(dir, "state.json"), "")
			require.NoError(t, err)
			assert.False(t, f.p.referencedData(saved)[file], "the saved state no longer refers to the data file")
			require.NoError(t, f.p.Close())

			// The next Open removes the unreferenced file, and only it.
			q, err := Open(dir, testOptions())
			require.NoError(t, err)
			defer q.Close()
			cloudtest.RequireError(t, d.get(q), 404, notFoundCode(d.name))
			assert.NoFileExists(t, file)
			kept := q.referencedData(q.Snapshot())
			assert.Len(t, kept, len(deletables())-1)
			for path := range kept {
				assert.FileExists(t, path)
			}
		})
	}
}

func TestADeleteRemovesTheDataOnceTheStateIsSaved(t *testing.T) {
	for _, d := range deletables() {
		t.Run(d.name, func(t *testing.T) {
			_, f := persistedFixture(t)
			file := d.file(f)
			require.NoError(t, d.delete(f))
			assert.NoFileExists(t, file)
			cloudtest.RequireError(t, d.get(f.p), 404, notFoundCode(d.name))
		})
	}
}

// A delete whose state cannot be saved fails and keeps the resource with
// its data.
func TestADeleteThatCannotSaveTheStateKeepsTheData(t *testing.T) {
	for _, d := range deletables() {
		t.Run(d.name, func(t *testing.T) {
			_, f := persistedFixture(t)
			file := d.file(f)
			saved := f.p.store.path
			f.p.store.path = filepath.Join(t.TempDir(), "missing", "state.json")
			err := d.delete(f)
			f.p.store.path = saved
			require.Error(t, err)
			assert.Contains(t, err.Error(), "write state")
			assert.FileExists(t, file)
			require.NoError(t, d.get(f.p), "the failed delete changed nothing")
		})
	}
}

func notFoundCode(kind string) string {
	if kind == "blob" {
		return "BlobNotFound"
	}
	return "ResourceNotFound"
}
