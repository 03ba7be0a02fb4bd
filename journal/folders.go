package journal

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

// JobFolders lists the folders a store's location holds journals in, one
// level of RELEASE/JOB below it: where a release's jobs keep their runs
// (`imgflow run releases/aks.star` journals job ID under
// LOCATION/RELEASE/ID), so that what sweeps a location (gc) reaches its
// release jobs' runs too.
type JobFolders interface {
	// JobFolders returns the RELEASE/JOB paths (slash-separated) that hold
	// at least one journal, sorted.
	JobFolders(ctx context.Context) ([]string, error)
}

// JobFolders implements JobFolders.
func (d Dir) JobFolders(context.Context) ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(string(d), "*", "*", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		rel, err := filepath.Rel(string(d), filepath.Dir(m))
		if err != nil {
			continue
		}
		if fi, err := os.Stat(m); err != nil || fi.IsDir() {
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// JobFolders implements JobFolders: the blobs PREFIX/RELEASE/JOB/RUN.jsonl.
func (s *AzureStore) JobFolders(ctx context.Context) ([]string, error) {
	var out []string
	err := s.eachBlob(ctx, func(_ *container.Client, item *container.BlobItem) error {
		name := strings.TrimPrefix(deref(item.Name), s.prefix)
		if dir, file := path.Split(name); strings.HasSuffix(file, ".jsonl") && strings.Count(dir, "/") == 2 {
			out = append(out, strings.TrimSuffix(dir, "/"))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
