package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/packer/localsim"
	"github.com/imgflow/imgflow/packer/packertest"
	"github.com/imgflow/imgflow/release"
)

// The release benchmarks of BENCHMARKS.md:
//
//	go test -run '^$' -bench Release -benchtime 5x ./cmd/imgflow/

func benchRoot(b *testing.B) string {
	b.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		b.Fatal(err)
	}
	return root
}

func benchCLI(b *testing.B, args ...string) {
	b.Helper()
	if code := runMain(context.Background(), args, io.Discard, io.Discard); code != 0 {
		b.Fatalf("imgflow %v: exit %d", args, code)
	}
}

// BenchmarkPlanAKSRelease is `imgflow plan releases/aks.star`: the 32 jobs
// of AgentBaker's pipeline, from the fixture checkout, planned, with imgflow's model of the packer
// templates (no packer process).
func BenchmarkPlanAKSRelease(b *testing.B) {
	b.Setenv("IMGFLOW_SECRET_UA_TOKEN", "bench")
	root := benchRoot(b)
	for b.Loop() {
		benchCLI(b, "plan", "--root", root, "--state", b.TempDir(), "--no-packer-validate", "--var", "agentbaker=//testdata/agentbaker", filepath.Join(root, "releases", "aks.star"))
	}
}

// BenchmarkPlanAKSReleaseWithPackerValidate adds `packer validate` of
// every job's build, as plan does when packer is on PATH, warm: every
// verdict is in the cache (filled before the timer starts), so no packer
// runs.
func BenchmarkPlanAKSReleaseWithPackerValidate(b *testing.B) {
	packertest.Require(b)
	b.Setenv("IMGFLOW_SECRET_UA_TOKEN", "bench")
	b.Setenv(cacheDirEnv, b.TempDir())
	root := benchRoot(b)
	state := b.TempDir()
	plan := func() {
		benchCLI(b, "plan", "--root", root, "--state", state, "--var", "agentbaker=//testdata/agentbaker", filepath.Join(root, "releases", "aks.star"))
	}
	plan()
	for b.Loop() {
		plan()
	}
}

// BenchmarkPlanAKSReleaseWithPackerValidateCold is the same with an empty
// cache every time: each distinct build runs packer validate, as many at
// once as there are cores.
func BenchmarkPlanAKSReleaseWithPackerValidateCold(b *testing.B) {
	packertest.Require(b)
	b.Setenv("IMGFLOW_SECRET_UA_TOKEN", "bench")
	root := benchRoot(b)
	for b.Loop() {
		b.Setenv(cacheDirEnv, b.TempDir())
		benchCLI(b, "plan", "--root", root, "--state", b.TempDir(), "--var", "agentbaker=//testdata/agentbaker", filepath.Join(root, "releases", "aks.star"))
	}
}

// slowLocalTarget is a fresh local target whose changes take the
// simulated latencies (its dry-run view, the overlay, only reads the
// base, and reads take no latency, so planning does not wait).
func slowLocalTarget(b *testing.B) *target {
	b.Helper()
	state := b.TempDir()
	p, err := local.Open(state, local.Options{})
	if err != nil {
		b.Fatal(err)
	}
	lat := faults.PipelineLatencies()
	slow := faults.WithLatency(p, lat)
	return &target{name: "local", provider: slow,
		runsDir: filepath.Join(state, "runs"), packer: localsim.New(slow).Slow(lat["packer"]), close: p.Close}
}

// BenchmarkRunFlatcarReleaseJ4 is `imgflow run -j 4 releases/flatcar.star`
// (the CLI's release run: every job planned, then run side by side, each
// with its journal, then the summary read back) on a fresh local target
// with simulated cloud latencies, against its longest job run alone on a
// fresh target: the metric x-longest is the ratio (the goal: 1.2 at most).
func BenchmarkRunFlatcarReleaseJ4(b *testing.B) {
	root := benchRoot(b)
	ws, err := localpacker.NewWorkspace(root)
	if err != nil {
		b.Fatal(err)
	}
	rel, err := release.Load(context.Background(), ws, "//releases/flatcar.star")
	if err != nil {
		b.Fatal(err)
	}
	if err := rel.Override(map[string]string{"image_builder": "//testdata/image-builder"}); err != nil {
		b.Fatal(err)
	}
	e := newEnv(io.Discard, io.Discard)
	run := func(r *release.Release) time.Duration {
		tgt := slowLocalTarget(b)
		defer tgt.close()
		start := time.Now()
		if err := runRelease(context.Background(), e, ws, tgt, r, 4, 0, ""); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var walls, longests time.Duration
	for b.Loop() {
		var longest time.Duration
		for _, j := range rel.Jobs {
			alone := *rel
			alone.Jobs = []*release.Job{j}
			longest = max(longest, run(&alone))
		}
		walls += run(rel)
		longests += longest
	}
	b.ReportMetric(float64(walls.Milliseconds())/float64(b.N), "ms-release")
	b.ReportMetric(float64(longests.Milliseconds())/float64(b.N), "ms-longest-job")
	b.ReportMetric(float64(walls)/float64(longests), "x-longest")
}

// BenchmarkPlanGen2 is `imgflow plan workflows/gen2.star
// --no-packer-validate` in process: the plan of issue 15's goal without
// the process start-up (bench/cli.sh measures the whole process).
func BenchmarkPlanGen2(b *testing.B) {
	root := benchRoot(b)
	for b.Loop() {
		benchCLI(b, "plan", "--root", root, "--state", b.TempDir(), "--no-packer-validate", filepath.Join(root, "workflows", "gen2.star"))
	}
}

// BenchmarkPlanGen2WithPackerValidate is `imgflow plan workflows/gen2.star`
// with packer on PATH, warm: its builds' verdicts are in the cache, on a
// state directory no run has written (a fresh checkout's).
func BenchmarkPlanGen2WithPackerValidate(b *testing.B) {
	packertest.Require(b)
	b.Setenv(cacheDirEnv, b.TempDir())
	root := benchRoot(b)
	plan := func() {
		benchCLI(b, "plan", "--root", root, "--state", b.TempDir(), filepath.Join(root, "workflows", "gen2.star"))
	}
	plan()
	for b.Loop() {
		plan()
	}
}
