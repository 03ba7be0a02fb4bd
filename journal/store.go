package journal

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/imgflow/imgflow/internal/redact"
)

// Store keeps the journals of runs.
type Store interface {
	// Create starts the journal of a new run with its header, held by
	// this process until Close.
	Create(ctx context.Context, header Record) (*File, error)
	// Open opens the journal of a run to resume it; it fails when another
	// process holds it.
	Open(ctx context.Context, runID string) (*File, error)
	// List summarises the runs, newest first.
	List(ctx context.Context) ([]Summary, error)
	// String is the store's location for messages: never a SAS.
	String() string
}

// IsURL reports whether a journal location is a URL (an Azure container)
// rather than a directory.
func IsURL(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")
}

// OpenStore returns the store at location: an Azure blob container for an
// http(s) URL (NewAzureStore with default options: a SAS in the URL, or
// DefaultAzureCredential), else a directory.
func OpenStore(location string) (Store, error) {
	if IsURL(location) {
		return NewAzureStore(location, nil)
	}
	return Dir(location), nil
}

// Dir is a directory of journal files (the state dir's runs/), created on
// the first Create. A journal is locked with flock while open.
type Dir string

// Create implements Store.
func (d Dir) Create(_ context.Context, header Record) (*File, error) {
	return createFile(string(d), header, false)
}

// Open implements Store.
func (d Dir) Open(_ context.Context, runID string) (*File, error) {
	return openFile(string(d), runID, false)
}

// List implements Store.
func (d Dir) List(context.Context) ([]Summary, error) { return listDir(string(d)) }

func (d Dir) String() string { return string(d) }

// ScratchDir is a Dir whose journals do not outlive the process that
// writes them (imgflow test's runs): the same files, locks and resume,
// without an fsync per record, which a workflow test would otherwise pay
// for every step.
type ScratchDir string

// Create implements Store.
func (d ScratchDir) Create(_ context.Context, header Record) (*File, error) {
	return createFile(string(d), header, true)
}

// Open implements Store.
func (d ScratchDir) Open(_ context.Context, runID string) (*File, error) {
	return openFile(string(d), runID, true)
}

// List implements Store.
func (d ScratchDir) List(context.Context) ([]Summary, error) { return listDir(string(d)) }

func (d ScratchDir) String() string { return string(d) }

// splitPrefix splits a journal URL into its container's URL and the
// folder of the journals in it: …/CONTAINER/aks/linux-fips keeps each run
// as the blob aks/linux-fips/RUN_ID.jsonl, so the jobs of a release keep
// their runs apart in one container. The prefix is "" or ends in "/"; a
// SAS query stays on the container URL.
func splitPrefix(location string) (containerURL, prefix string, err error) {
	parts, err := blob.ParseURL(location)
	if err != nil || parts.BlobName == "" {
		return location, "", nil // NewContainerClient explains what is wrong
	}
	folder := strings.Trim(parts.BlobName, "/")
	for _, seg := range strings.Split(folder, "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasSuffix(seg, ".jsonl") {
			return "", "", fmt.Errorf("journal: %s is not a blob container URL or a folder in one: want https://ACCOUNT.blob.core.windows.net/CONTAINER[/FOLDER…] (each run is the blob RUN_ID.jsonl in it)", redact.URL(location))
		}
	}
	u, err := url.Parse(location)
	if err != nil {
		return location, "", nil
	}
	u.Path, u.RawPath = strings.TrimSuffix(strings.TrimRight(u.Path, "/"), "/"+folder), ""
	return u.String(), folder + "/", nil // the query as it came: a SAS is signed as written
}
