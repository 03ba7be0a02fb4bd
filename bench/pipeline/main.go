// Command pipeline measures how much of a pipeline's wall-clock time
// imgflow's concurrency saves: every workflow runs on the local target with
// simulated cloud latencies (packer builds, replication, copies), first one
// after another, then all side by side (imgflow run -j), and flatcar_capi
// with one and with several Kubernetes versions (its parallel() branches).
// The ideal for side-by-side is the longest single workflow; for
// parallel() it is one branch.
//
//	go run ./bench/pipeline [-scale 1.0] [-runs 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer/localsim"
)

// varsOf are the vars each workflow needs beyond its defaults.
var varsOf = map[string]map[string]string{
	"flatcar.star": {"version": "4152.2.3", "vhd": "//testdata/flatcar/flatcar-linux-test-amd64.vhd"},
}

func main() {
	scale := flag.Float64("scale", 1, "multiply every latency")
	runs := flag.Int("runs", 3, "repetitions; the median is reported")
	flag.Parse()
	if err := run(*scale, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
}

func run(scale float64, runs int) error {
	ws, err := localpacker.NewWorkspace(".")
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(ws.Root, "workflows", "*.star"))
	if err != nil {
		return err
	}
	var workflows []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.star") {
			workflows = append(workflows, filepath.Base(f))
		}
	}
	lat := map[string]time.Duration{}
	for k, v := range faults.PipelineLatencies() { // scaled by -scale
		lat[k] = time.Duration(float64(v) * scale)
	}
	b := &bench{ws: ws, lat: lat}

	fmt.Printf("workflows: %s\nlatencies (scale %.2f): packer %s, replication %s, copy %s\n\n",
		strings.Join(workflows, " "), scale, lat["packer"], lat["CreateImageVersion"], lat["CopyBlob"])
	single := map[string]time.Duration{}
	var seq, side []time.Duration
	for i := 0; i < runs; i++ {
		total := time.Duration(0)
		for _, w := range workflows {
			d, err := b.timed(func(p cloud.Provider) error { return b.workflow(p, w, nil) })
			if err != nil {
				return fmt.Errorf("%s: %w", w, err)
			}
			total += d
			if i == 0 || d < single[w] {
				single[w] = d
			}
		}
		seq = append(seq, total)
		d, err := b.timed(func(p cloud.Provider) error { return b.sideBySide(p, workflows) })
		if err != nil {
			return err
		}
		side = append(side, d)
	}
	longest := time.Duration(0)
	for _, d := range single {
		longest = max(longest, d)
	}
	fmt.Println("| workflow | alone |")
	fmt.Println("|---|---|")
	for _, w := range workflows {
		fmt.Printf("| %s | %s |\n", w, single[w].Round(time.Millisecond))
	}
	ms, mj := median(seq), median(side)
	fmt.Printf("\n| mode | wall clock (median of %d) | vs sequential | vs ideal (longest workflow %s) |\n|---|---|---|---|\n", runs, longest.Round(time.Millisecond))
	fmt.Printf("| sequential | %s | 1.00× | %.2f× |\n", ms.Round(time.Millisecond), float64(ms)/float64(longest))
	fmt.Printf("| side by side (-j %d) | %s | %.2f× faster | %.2f× |\n", len(workflows), mj.Round(time.Millisecond), float64(ms)/float64(mj), float64(mj)/float64(longest))

	if contains(workflows, "flatcar_capi.star") {
		var one, three []time.Duration
		for i := 0; i < runs; i++ {
			d1, err := b.timed(func(p cloud.Provider) error {
				return b.workflow(p, "flatcar_capi.star", map[string]string{"kubernetes_versions": "1.31.1"})
			})
			if err != nil {
				return err
			}
			d3, err := b.timed(func(p cloud.Provider) error {
				return b.workflow(p, "flatcar_capi.star", map[string]string{"kubernetes_versions": "1.30.5,1.31.1,1.32.2"})
			})
			if err != nil {
				return err
			}
			one, three = append(one, d1), append(three, d3)
		}
		m1, m3 := median(one), median(three)
		fmt.Printf("\n| flatcar_capi (parallel() per Kubernetes version) | wall clock | vs ideal (one version) |\n|---|---|---|\n")
		fmt.Printf("| 1 version | %s | 1.00× |\n| 3 versions | %s | %.2f× |\n", m1.Round(time.Millisecond), m3.Round(time.Millisecond), float64(m3)/float64(m1))
	}
	return nil
}

type bench struct {
	ws  *builtins.Workspace
	lat map[string]time.Duration
}

// timed runs fn against a fresh simulated subscription with latencies.
func (b *bench) timed(fn func(p cloud.Provider) error) (time.Duration, error) {
	p, err := local.NewMemory(local.Options{Rand: rand.New(rand.NewSource(1))})
	if err != nil {
		return 0, err
	}
	defer p.Close()
	start := time.Now()
	err = fn(faults.WithLatency(p, b.lat))
	return time.Since(start), err
}

func (b *bench) workflow(p cloud.Provider, file string, extra map[string]string) error {
	vars := map[string]starlark.Value{}
	for k, v := range varsOf[file] {
		vars[k] = starlark.String(v)
	}
	for k, v := range extra {
		vars[k] = starlark.String(v)
	}
	res := interp.Run(context.Background(), "//workflows/"+file, interp.Config{
		Workspace: b.ws, Registry: builtins.NewRegistry(), Vars: vars,
		Info:   builtins.RunInfo{ID: "bench-" + strings.TrimSuffix(file, ".star"), Time: time.Now().UTC().Truncate(time.Second)},
		Packer: localsim.New(p).Slow(b.lat["packer"]),
	}, interp.Target{Apply: p})
	return res.Err
}

func (b *bench) sideBySide(p cloud.Provider, workflows []string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(workflows))
	for i, w := range workflows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.workflow(p, w, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", workflows[i], err)
		}
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
