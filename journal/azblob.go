package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"

	"github.com/imgflow/imgflow/internal/redact"
)

// Limits of a journal kept in Azure.
const (
	// MaxBlocks is how many blocks an append blob holds (Azure's limit),
	// so about how many records a journal in Azure holds: one per
	// cloud-changing step, cleanup and attempt (a record over
	// MaxBlockSize takes several). A run has far fewer; one that reaches it
	// fails with a clear error instead of losing records.
	MaxBlocks = 50000
	// MaxBlockSize is the largest append block: 4 MiB on every service
	// version. A longer record (a test_vm step with whole scan reports)
	// takes several blocks; a crash between them leaves a torn line,
	// which the next writer terminates and every reader skips, as any
	// torn record.
	MaxBlockSize = 4 << 20
	// DefaultLeaseDuration is the lease on an open journal, renewed every
	// third of it while open: a process that dies without releasing it
	// frees the run that much later at most.
	DefaultLeaseDuration = 60 * time.Second
	// opTimeout bounds one blob operation with its retries.
	opTimeout = 2 * time.Minute
)

// ContainerClients makes authenticated clients of blob containers. The
// Azure target (*azure.Provider) is one: its credential, --storage-auth
// (aad, key from ListKeys, or auto) and SAS redaction then apply to the
// journal as to every other blob call, so journal has no Azure client
// construction of its own.
type ContainerClients interface {
	ContainerClient(ctx context.Context, containerURL string) (*container.Client, error)
}

// AzureOptions configure an AzureStore. The zero value is ready to use
// with container URLs carrying a SAS.
type AzureOptions struct {
	// Clients authenticates when the URL carries no SAS: the Azure
	// target's provider. Without it such a URL is refused.
	Clients ContainerClients
	// LeaseDuration is the lease on an open journal, 15 s to 60 s
	// (default DefaultLeaseDuration).
	LeaseDuration time.Duration
	// Client are the blob client options (transport, retry) of a SAS URL's
	// client; Clients' clients have their own.
	Client *container.ClientOptions
}

// AzureStore keeps journals in an Azure blob container, each run as the
// append blob RUN_ID.jsonl, so a run can resume on another machine (a CI
// job on another agent).
//
// A record is one append block, acknowledged before Append returns (the
// durability point, as fsync is for a file), appended at the position the
// process expects (so a retried append cannot duplicate a record) and
// under the journal's lease. A blob holds at most MaxBlocks blocks.
//
// The lease, acquired by Create and Open and renewed in the background
// until Close releases it, refuses a second process ("in use by another
// imgflow process"); a process that lost it (it could not renew in time
// and another took the run) cannot append any more. A process that dies
// leaves the lease to expire within the lease duration.
type AzureStore struct {
	url    string // the container URL (with its folder) without its query: shown in messages
	full   string // the container URL as given, without the folder (a SAS stays here only)
	prefix string // the folder of the journals in the container, "" or ending in /
	lease  time.Duration
	// cc is the SAS URL's client, made at once; otherwise clients makes
	// one on first use (checking the access may take requests).
	cc      *container.Client
	clients ContainerClients
	mu      sync.Mutex
}

// NewAzureStore returns the store of the container at containerURL:
// https://ACCOUNT.blob.core.windows.net/CONTAINER, or a folder in it,
// CONTAINER/FOLDER/… (see splitPrefix; a SAS query is a
// credential, never shown; it needs read, add, create, write and list
// permissions), or an emulator's http://127.0.0.1:PORT/ACCOUNT/CONTAINER.
// It makes no request; Create makes the container when it is missing.
// opts may be nil.
func NewAzureStore(containerURL string, opts *AzureOptions) (*AzureStore, error) {
	var o AzureOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.LeaseDuration == 0:
		o.LeaseDuration = DefaultLeaseDuration
	case o.LeaseDuration < 15*time.Second || o.LeaseDuration > 60*time.Second:
		return nil, fmt.Errorf("journal: lease duration %s is not between 15s and 60s", o.LeaseDuration)
	}
	containerURL, prefix, err := splitPrefix(containerURL)
	if err != nil {
		return nil, err
	}
	shown := redact.URL(containerURL)
	u, err := url.Parse(containerURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("journal: %s is not a blob container URL: want https://ACCOUNT.blob.core.windows.net/CONTAINER", shown)
	}
	parts, err := blob.ParseURL(containerURL)
	if err != nil {
		return nil, fmt.Errorf("journal: %s is not a blob container URL: want https://ACCOUNT.blob.core.windows.net/CONTAINER", shown)
	}
	if parts.ContainerName == "" || parts.BlobName != "" {
		return nil, fmt.Errorf("journal: %s is not a blob container URL: want https://ACCOUNT.blob.core.windows.net/CONTAINER (each run is the blob RUN_ID.jsonl in it)", shown)
	}
	base, _, _ := strings.Cut(containerURL, "?") // the SAS, never shown
	s := &AzureStore{url: strings.TrimRight(base, "/"), full: containerURL, prefix: prefix, lease: o.LeaseDuration, clients: o.Clients}
	if prefix != "" {
		s.url += "/" + strings.TrimSuffix(prefix, "/")
	}
	switch {
	case parts.SAS.Signature() != "":
		var copts container.ClientOptions
		if o.Client != nil {
			copts = *o.Client
		}
		if s.cc, err = container.NewClientWithNoCredential(containerURL, &copts); err != nil {
			return nil, fmt.Errorf("journal %s: %w", shown, err)
		}
	case u.RawQuery != "":
		return nil, fmt.Errorf("journal: %s: the query of a container URL can only be a SAS", shown)
	case o.Clients == nil:
		return nil, fmt.Errorf("journal %s: no Azure credential for it: run with --target azure (the journal then authenticates as its blob calls, see --storage-auth), or put a SAS in the URL", shown)
	}
	return s, nil
}

// container is the store's container client: the SAS URL's, or the one
// Clients makes, once.
func (s *AzureStore) container(ctx context.Context) (*container.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cc != nil {
		return s.cc, nil
	}
	cc, err := s.clients.ContainerClient(ctx, s.full)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", s.url, redact.Error(err))
	}
	s.cc = cc
	return cc, nil
}

func (s *AzureStore) String() string { return s.url }

// blobURL is a run's journal as messages show it.
func (s *AzureStore) blobURL(runID string) string { return s.url + "/" + runID + ".jsonl" }

// blobName is the name of a run's journal blob in the container.
func (s *AzureStore) blobName(runID string) string { return s.prefix + runID + ".jsonl" }

func checkRunID(runID string) error {
	if runID == "" {
		return errors.New("journal: run id is empty")
	}
	if strings.ContainsAny(runID, "/\\?#") {
		return fmt.Errorf("journal: run id %q is not a valid blob name", runID)
	}
	return nil
}

// Create implements Store: it creates the append blob (and the container
// when missing), leases it and appends the header.
func (s *AzureStore) Create(ctx context.Context, header Record) (*File, error) {
	if err := checkRunID(header.RunID); err != nil {
		return nil, err
	}
	shown := s.blobURL(header.RunID)
	cc, err := s.container(ctx)
	if err != nil {
		return nil, err
	}
	ab := cc.NewAppendBlobClient(s.blobName(header.RunID))
	create := func() error {
		ctx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		_, err := ab.Create(ctx, &appendblob.CreateOptions{
			AccessConditions: &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}},
			HTTPHeaders:      &blob.HTTPHeaders{BlobContentType: to("application/x-ndjson")},
		})
		return err
	}
	err = create()
	if bloberror.HasCode(err, bloberror.ContainerNotFound) {
		cctx, cancel := context.WithTimeout(ctx, opTimeout)
		_, cerr := cc.Create(cctx, nil)
		cancel()
		if cerr != nil && !bloberror.HasCode(cerr, bloberror.ContainerAlreadyExists) {
			return nil, fmt.Errorf("journal: create container %s: %w", s.url, redact.Error(cerr))
		}
		err = create()
	}
	switch {
	case bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet):
		return nil, fmt.Errorf("journal: create %s: the run exists already", shown)
	case err != nil:
		return nil, fmt.Errorf("journal: create %s: %w", shown, redact.Error(err))
	}
	w, err := s.hold(ctx, header.RunID, ab)
	if err != nil {
		return nil, err
	}
	j := &File{path: shown, w: w}
	header.Type = TypeRun
	if err := j.Append(header); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// Open implements Store: it leases the run's blob (refused while another
// process holds it), then reads it.
func (s *AzureStore) Open(ctx context.Context, runID string) (*File, error) {
	if err := checkRunID(runID); err != nil {
		return nil, err
	}
	shown := s.blobURL(runID)
	cc, err := s.container(ctx)
	if err != nil {
		return nil, err
	}
	ab := cc.NewAppendBlobClient(s.blobName(runID))
	w, err := s.hold(ctx, runID, ab)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*File, error) {
		_ = w.close()
		return nil, err
	}
	data, props, err := download(ctx, ab.BlobClient())
	if err != nil {
		return fail(fmt.Errorf("journal %s: %w", shown, err))
	}
	if props.BlobType != nil && *props.BlobType != blob.BlobTypeAppendBlob {
		return fail(fmt.Errorf("journal %s is a %s, not an append blob", shown, *props.BlobType))
	}
	p, err := read(bytes.NewReader(data), shown, runID)
	if err != nil {
		return fail(err)
	}
	if len(p.records) == 0 {
		return fail(&NotStartedError{Path: shown, RunID: runID})
	}
	w.size = int64(len(data))
	if props.BlobCommittedBlockCount != nil {
		w.blocks = int(*props.BlobCommittedBlockCount)
	}
	// The tail is torn when a writer died between the blocks of a long
	// record (or something else wrote it); an append blob cannot be
	// truncated: terminate the torn line so the next record starts on a
	// line of its own, marked as torn so that read skips it rather than
	// taking it for corruption.
	if int(p.good) < len(data) && data[len(data)-1] != '\n' {
		if err := w.write([]byte(tornMark)); err != nil {
			return fail(fmt.Errorf("journal %s: %w", shown, err))
		}
	}
	return &File{path: shown, w: w, records: p.records, unverified: p.unverified}, nil
}

// List implements Store: every RUN_ID.jsonl blob of the container, running
// while it is leased.
func (s *AzureStore) List(ctx context.Context) ([]Summary, error) {
	var out []Summary
	err := s.eachBlob(ctx, func(cc *container.Client, item *container.BlobItem) error {
		full := deref(item.Name)
		name := strings.TrimPrefix(full, s.prefix)
		if !strings.HasSuffix(name, ".jsonl") || strings.Contains(name, "/") {
			return nil // another folder's journals
		}
		data, _, err := download(ctx, cc.NewBlobClient(full))
		if bloberror.HasCode(err, bloberror.BlobNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("journal %s/%s: %w", s.url, name, err)
		}
		runID := strings.TrimSuffix(name, ".jsonl")
		p, err := read(bytes.NewReader(data), s.url+"/"+name, runID)
		if err != nil || len(p.records) == 0 {
			out = append(out, unreadable(name, err))
			return nil
		}
		leased := item.Properties != nil && item.Properties.LeaseState != nil && *item.Properties.LeaseState == lease.StateTypeLeased
		out = append(out, summarize(p, leased))
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortSummaries(out)
	return out, nil
}

// eachBlob calls fn for every blob under the store's folder, its own
// journals and its sub-folders'; a missing container holds none.
func (s *AzureStore) eachBlob(ctx context.Context, fn func(*container.Client, *container.BlobItem) error) error {
	cc, err := s.container(ctx)
	if err != nil {
		return err
	}
	pager := cc.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: to(s.prefix)})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if bloberror.HasCode(err, bloberror.ContainerNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal: list %s: %w", s.url, redact.Error(err))
		}
		for _, item := range page.Segment.BlobItems {
			if err := fn(cc, item); err != nil {
				return err
			}
		}
	}
	return nil
}

// download reads a whole blob.
func download(ctx context.Context, bc *blob.Client) ([]byte, blob.DownloadResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	resp, err := bc.DownloadStream(ctx, nil)
	if err != nil {
		return nil, blob.DownloadResponse{}, redact.Error(err)
	}
	body := resp.NewRetryReader(ctx, nil)
	defer body.Close()
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, blob.DownloadResponse{}, redact.Error(err)
	}
	return data, resp.DownloadResponse, nil
}

// hold leases a run's blob and starts renewing the lease.
func (s *AzureStore) hold(ctx context.Context, runID string, ab *appendblob.Client) (*blobWriter, error) {
	shown := s.blobURL(runID)
	lc, err := lease.NewBlobClient(ab, nil)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", shown, err)
	}
	lctx, cancel := context.WithTimeout(ctx, opTimeout)
	_, err = lc.AcquireLease(lctx, int32(s.lease/time.Second), nil)
	cancel()
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound):
		return nil, fmt.Errorf("no run %s in %s: `imgflow runs --journal %s` lists the runs that can be resumed", runID, s.url, s.url)
	case bloberror.HasCode(err, bloberror.LeaseAlreadyPresent):
		return nil, fmt.Errorf("run %s is in use by another imgflow process (its journal %s is leased; the lease of a process that died expires within %s): wait for it, or stop it", runID, shown, s.lease)
	case err != nil:
		return nil, fmt.Errorf("journal %s: lease: %w", shown, redact.Error(err))
	}
	w := &blobWriter{ab: ab, lc: lc, every: s.lease / 3, stop: make(chan struct{}), done: make(chan struct{})}
	go w.renew()
	return w, nil
}

// blobWriter appends a journal's records to its leased append blob. write
// and close are serialised by the File.
type blobWriter struct {
	ab     *appendblob.Client
	lc     *lease.BlobClient
	size   int64 // bytes in the blob: where the next block goes
	blocks int   // committed blocks
	every  time.Duration

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	mu       sync.Mutex
	renewErr error
}

func (w *blobWriter) conditions() *blob.AccessConditions {
	return &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: w.lc.LeaseID()}}
}

// write appends line in blocks of at most MaxBlockSize; a record the
// blob has no room left for is refused whole, not torn.
func (w *blobWriter) write(line []byte) error {
	if w.blocks+(len(line)+MaxBlockSize-1)/MaxBlockSize > MaxBlocks {
		return errFull
	}
	for len(line) > 0 {
		n := min(len(line), MaxBlockSize)
		if err := w.appendBlock(line[:n]); err != nil {
			return err
		}
		line = line[n:]
	}
	return nil
}

// appendBlock appends one block at the end this process knows.
func (w *blobWriter) appendBlock(line []byte) error {
	if w.blocks >= MaxBlocks {
		return errFull
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	pos := w.size
	resp, err := w.ab.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(line)), &appendblob.AppendBlockOptions{
		AppendPositionAccessConditions: &appendblob.AppendPositionAccessConditions{AppendPosition: &pos},
		AccessConditions:               w.conditions(),
	})
	if err == nil {
		w.size += int64(len(line))
		w.blocks++
		if resp.BlobCommittedBlockCount != nil {
			w.blocks = int(*resp.BlobCommittedBlockCount)
		}
		return nil
	}
	switch {
	case bloberror.HasCode(err, bloberror.AppendPositionConditionNotMet):
		// The SDK retried an append whose answer was lost: under our
		// lease nobody else appends, so a blob longer by exactly this
		// record holds it.
		props, perr := w.ab.GetProperties(ctx, &blob.GetPropertiesOptions{AccessConditions: w.conditions()})
		if perr == nil && props.ContentLength != nil && *props.ContentLength == pos+int64(len(line)) {
			w.size = *props.ContentLength
			w.blocks++
			if props.BlobCommittedBlockCount != nil {
				w.blocks = int(*props.BlobCommittedBlockCount)
			}
			return nil
		}
		return fmt.Errorf("the journal is no longer the %d bytes this process wrote: another process appended to it", pos)
	case bloberror.HasCode(err, bloberror.BlockCountExceedsLimit):
		return errFull
	case bloberror.HasCode(err, bloberror.LeaseLost, bloberror.LeaseIDMismatchWithBlobOperation, bloberror.LeaseNotPresentWithBlobOperation, bloberror.LeaseIDMissing):
		w.mu.Lock()
		renewErr := w.renewErr
		w.mu.Unlock()
		why := ""
		if renewErr != nil {
			why = fmt.Sprintf(" (renewing it failed: %v)", renewErr)
		}
		return fmt.Errorf("this process lost the lease on the journal%s: another imgflow process may have taken the run over, so this one stops: %w", why, redact.Error(err))
	}
	return redact.Error(err)
}

var errFull = fmt.Errorf("the journal's append blob is full: it holds at most %d blocks (a record each, or several for one over %d MiB), and a run has far fewer steps, so this run likely repeats a cloud-changing call in a loop", MaxBlocks, MaxBlockSize>>20)

// renew renews the lease every third of its duration until stopped. A
// failure is kept for the error of the next append that the lost lease
// refuses; renewing goes on (an expired lease nobody took renews).
func (w *blobWriter) renew() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.every)
		_, err := w.lc.RenewLease(ctx, nil)
		cancel()
		w.mu.Lock()
		w.renewErr = redact.Error(err)
		w.mu.Unlock()
	}
}

// abandon stops renewing without releasing the lease, as a process that
// dies does.
func (w *blobWriter) abandon() {
	w.stopOnce.Do(func() { close(w.stop) })
	<-w.done
}

// close stops renewing and releases the lease.
func (w *blobWriter) close() error {
	w.abandon()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := w.lc.ReleaseLease(ctx, nil); err != nil {
		return fmt.Errorf("release lease: %w", redact.Error(err))
	}
	return nil
}

func to[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
