package interp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

func benchConfig(b *testing.B) interp.Config { return testharness.New(b, "..", "bench").Config(nil) }

// BenchmarkLoadFlatcar measures loading and running the Flatcar workflow's
// validation pass (parse, resolve, load lib/flatcar.star, every builtin)
// against an in-memory cloud.
func BenchmarkLoadFlatcar(b *testing.B) {
	cfg := benchConfig(b)
	cfg.Vars = map[string]starlark.Value{"version": starlark.String("4152.2.3"), "vhd": starlark.String("//testdata/flatcar/flatcar-linux-test-amd64.vhd")}
	p, err := local.NewMemory(local.Options{})
	require.NoError(b, err)
	defer p.Close()
	b.ResetTimer()
	for b.Loop() {
		res := interp.Plan(context.Background(), "//workflows/flatcar.star", cfg, overlay.New(p))
		require.NoError(b, res.Err)
	}
}

// BenchmarkBuiltinDispatch measures 1,000 calls of a pure builtin.
func BenchmarkBuiltinDispatch(b *testing.B) {
	cfg := benchConfig(b)
	p, err := local.NewMemory(local.Options{})
	require.NoError(b, err)
	defer p.Close()
	b.ResetTimer()
	for b.Loop() {
		res := interp.Plan(context.Background(), "//testdata/bench/dispatch.star", cfg, p)
		require.NoError(b, res.Err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/call")
}

// BenchmarkJournalReplay measures resuming a finished 1,000-step run: every
// step comes from the journal, none reaches the cloud.
func BenchmarkJournalReplay(b *testing.B) {
	cfg := benchConfig(b)
	p, err := local.NewMemory(local.Options{})
	require.NoError(b, err)
	defer p.Close()
	ctx := context.Background()
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "bench", Location: "westeurope"})
	require.NoError(b, err)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "benchstore", ResourceGroup: "bench", Location: "westeurope"})
	require.NoError(b, err)
	require.NoError(b, p.EnsureContainer(ctx, "benchstore", "vhds"))
	_, err = p.UploadPageBlob(ctx, cloud.BlobRef{Account: "benchstore", Container: "vhds", Name: "src.vhd"}, cloud.PageSource{Reader: zeroReader{}, Size: 1 << 20}, false)
	require.NoError(b, err)

	dir := b.TempDir()
	j, err := journal.Create(dir, journal.Record{RunID: "bench", RunTime: &cfg.Info.Time})
	require.NoError(b, err)
	cfg.Journal = j
	res := interp.Run(ctx, "//testdata/bench/steps.star", cfg, interp.Target{Apply: p})
	require.NoError(b, res.Err)
	require.NoError(b, j.Close())

	// A cloud that fails every call proves the replay never reaches it.
	dead := faults.WithFaults(p, faults.NewFaults(map[string]faults.Fault{
		"CopyBlob": {StatusCode: 500}, "CreateResourceGroup": {StatusCode: 500}, "CreateStorageAccount": {StatusCode: 500},
	}))
	b.ResetTimer()
	for b.Loop() {
		j, err := journal.Open(dir, "bench")
		require.NoError(b, err)
		cfg.Journal = j
		res := interp.Run(ctx, "//testdata/bench/steps.star", cfg, interp.Target{Apply: dead})
		require.NoError(b, res.Err)
		require.NoError(b, j.Close())
	}
}

type zeroReader struct{}

func (zeroReader) ReadAt(p []byte, _ int64) (int, error) {
	clear(p)
	return len(p), nil
}
