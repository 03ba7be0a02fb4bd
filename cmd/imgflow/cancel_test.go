//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spinWorkflow never ends on its own: its loop runs in the validation
// pass already.
const spinWorkflow = `
def spin():
    x = 0
    for i in range(1000000000):
        x = i
    return x

output("x", spin())
`

// applySpinWorkflow makes a change, then spins in the apply pass only: the
// validation pass does not run command(), whose output is then empty.
const applySpinWorkflow = `
def spin():
    x = 0
    for i in range(1000000000):
        x = i
    return x

resource_group("rg-spin", location = "westeurope")
started = command(["echo", "spinning"])
if started.output:
    spin()
`

// spinningCleanupWorkflow registers a cleanup that never ends, then spins,
// in the apply pass only.
const spinningCleanupWorkflow = `
def spin():
    x = 0
    for i in range(1000000000):
        x = i
    return x

started = command(["echo", "spinning"])
if started.output:
    cleanup(spin)
    spin()
`

// temporaryThenSpinWorkflow registers the deletion of a temporary
// resource (as temporary() does) that a later step would use, then spins
// in the apply pass only.
const temporaryThenSpinWorkflow = `
def spin():
    x = 0
    for i in range(1000000000):
        x = i
    return x

rg = resource_group("rg-keep", location = "westeurope")
g = gallery("keep_gallery", resource_group = rg)
staging = image_definition(g, name = "staging-def", publisher = "p", offer = "o", sku = "s", os_type = "Linux")
cleanup(lambda: delete(staging), deletes = staging)
started = command(["echo", "spinning"])
if started.output:
    spin()
`

// applyGrowWorkflow holds ever more memory in the apply pass only.
const applyGrowWorkflow = `
def grow():
    held = []
    for i in range(100000):
        held.append(["x" * 1024] * 100000)
    return len(held)

resource_group("rg-grow", location = "westeurope")
started = command(["echo", "growing"])
if started.output:
    grow()
`

// workspaceWith makes a workspace holding the workflow file wf.star.
func workspaceWith(t *testing.T, src string) (root, file string) {
	t.Helper()
	root = t.TempDir()
	file = filepath.Join(root, "wf.star")
	require.NoError(t, os.WriteFile(file, []byte(src), 0o644))
	return root, file
}

// lockedBuffer is a bytes.Buffer a test reads while a process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// signalledRun is an `imgflow run` process stopped by a signal.
type signalledRun struct {
	code           int
	stdout, stderr string
	// exitAfter is the time from the last signal to the process's exit.
	exitAfter time.Duration
	runID     string
}

// runningImgflow is an imgflow process the test signals.
type runningImgflow struct {
	t              *testing.T
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	exited         chan error
}

// startImgflow starts bin with args; env is added to the environment.
func startImgflow(t *testing.T, bin string, env []string, args ...string) *runningImgflow {
	t.Helper()
	p := &runningImgflow{t: t, cmd: exec.Command(bin, args...), exited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	require.NoError(t, p.cmd.Start())
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	return p
}

func (p *runningImgflow) output() string {
	return "stdout:\n" + p.stdout.String() + "\nstderr:\n" + p.stderr.String()
}

// waitFor waits for ready in the process's stdout, and a moment more so
// it is inside the loop that follows.
func (p *runningImgflow) waitFor(ready string) {
	p.t.Helper()
	deadline := time.After(60 * time.Second)
	for !strings.Contains(p.stdout.String(), ready) {
		select {
		case err := <-p.exited:
			p.t.Fatalf("imgflow ended before %q: %v\n%s", ready, err, p.output())
		case <-deadline:
			p.t.Fatalf("imgflow never printed %q\n%s", ready, p.output())
		case <-time.After(10 * time.Millisecond):
		}
	}
	time.Sleep(300 * time.Millisecond)
	p.stillRunning("the signal")
}

// stillRunning fails the test when the process has ended.
func (p *runningImgflow) stillRunning(before string) {
	p.t.Helper()
	select {
	case err := <-p.exited:
		p.t.Fatalf("imgflow ended before %s: %v\n%s", before, err, p.output())
	default:
	}
}

// signal sends sig and waits for the process to exit.
func (p *runningImgflow) signal(sig syscall.Signal) signalledRun {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(sig))
	signalled := time.Now()
	var err error
	select {
	case err = <-p.exited:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("imgflow did not stop within 30s of %v\n%s", sig, p.output())
	}
	res := signalledRun{exitAfter: time.Since(signalled), stdout: p.stdout.String(), stderr: p.stderr.String()}
	var exit *exec.ExitError
	require.True(p.t, errors.As(err, &exit), "imgflow exited with %v\n%s", err, p.output())
	res.code = exit.ExitCode() // -1 when the signal itself killed it
	m := runIDRE.FindStringSubmatch(res.stdout)
	require.NotNil(p.t, m, res.stdout)
	res.runID = m[1]
	p.t.Logf("%v: imgflow exited %v after the signal (status %d)", sig, res.exitAfter, res.code)
	return res
}

// runUntilSignalled runs the workflow on the local target, sends sig once
// ready is in its stdout, and waits for the exit.
func runUntilSignalled(t *testing.T, bin, root, state, file, ready string, sig syscall.Signal) signalledRun {
	t.Helper()
	p := startImgflow(t, bin, nil, "run", "--root", root, "--state", state, "--max-steps", "100000000000", file)
	p.waitFor(ready)
	return p.signal(sig)
}

// runSummary is the `imgflow runs` entry of a run.
func runSummary(t *testing.T, state, runID string) map[string]any {
	t.Helper()
	res := imgflow(t, "runs", "--state", state, "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	var doc any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &doc), res.stdout)
	var found map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["run_id"] == runID {
				found = v
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	require.NotNil(t, found, "run %s not in %s", runID, res.stdout)
	return found
}

// buildImgflow builds the imgflow binary, which receives signals as users
// run it (the test binary's IMGFLOW_TEST_MAIN mode does not catch them):
// once for the package's tests (see buildCmd).
func buildImgflow(t *testing.T) string {
	t.Helper()
	return buildCmd(t, "imgflow")
}

func TestSignalsCancelARun(t *testing.T) {
	bin := buildImgflow(t)

	// A runaway loop stops within a second of SIGTERM, in the validation
	// pass: nothing was changed, so there is nothing to resume.
	t.Run("SIGTERM while validating", func(t *testing.T) {
		root, file := workspaceWith(t, spinWorkflow)
		state := t.TempDir()
		res := runUntilSignalled(t, bin, root, state, file, "(target local, run ", syscall.SIGTERM)
		assert.Less(t, res.exitAfter, 3*time.Second, "a runaway loop stops at once (1s on an idle machine)")
		assert.Equal(t, 143, res.code, res.stderr)
		assert.Regexp(t, `error: wf.star:[45]:\d+: Starlark computation cancelled: interrupted: terminated signal received`, res.stderr, "the error is at a line of the loop")
		assert.Contains(t, res.stderr, "run "+res.runID+" was cancelled (terminated signal received) before any change: nothing to resume")
		assert.NotContains(t, res.stderr, "--resume")
		assert.NotContains(t, res.stderr, "found while validating")
		summary := runSummary(t, state, res.runID)
		assert.Equal(t, "cancelled", summary["status"])
		assert.Equal(t, false, summary["resumable"])
	})

	// Cancelled after a change, the run says how to resume it.
	t.Run("SIGINT while applying", func(t *testing.T) {
		root, file := workspaceWith(t, applySpinWorkflow)
		state := t.TempDir()
		res := runUntilSignalled(t, bin, root, state, file, "spinning", syscall.SIGINT)
		assert.Less(t, res.exitAfter, 3*time.Second)
		assert.Equal(t, 130, res.code, res.stderr)
		assert.Contains(t, res.stderr, "interrupted: interrupt signal received")
		assert.Contains(t, res.stderr, "run "+res.runID+" was cancelled (interrupt signal received): resume it with: imgflow run --resume "+res.runID)
		summary := runSummary(t, state, res.runID)
		assert.Equal(t, "cancelled", summary["status"])
		assert.Equal(t, true, summary["resumable"])
		assert.EqualValues(t, 2, summary["steps"], "the resource group and the command are journaled")
	})

	// A resource the workflow deletes when it ends (temporary()) may be
	// what its later steps use: a cancelled run keeps it so that "resume
	// it with" holds; gc deletes it once the run is abandoned.
	t.Run("SIGTERM keeps what the resume needs", func(t *testing.T) {
		root, file := workspaceWith(t, temporaryThenSpinWorkflow)
		state := t.TempDir()
		res := runUntilSignalled(t, bin, root, state, file, "spinning", syscall.SIGTERM)
		assert.Equal(t, 143, res.code, res.stderr)
		assert.Contains(t, res.stderr, "resume it with: imgflow run --resume "+res.runID)
		assert.Contains(t, res.stdout+res.stderr, "kept for the resume: ")
		st := imgflow(t, "state", "--state", state, "--output", "json")
		require.Equal(t, 0, st.code, st.String())
		assert.Contains(t, st.stdout, "staging-def", "the cancelled run kept the staging definition")

		gc := imgflow(t, "gc", "--root", root, "--state", state, "--older-than", "0s")
		require.Equal(t, 0, gc.code, gc.String())
		st = imgflow(t, "state", "--state", state, "--output", "json")
		assert.NotContains(t, st.stdout, "staging-def", "gc deletes it once the run is abandoned")
	})

	// The first signal cancels the run, whose cleanup then spins; the
	// second ends the process, which leaves the run interrupted.
	t.Run("second SIGTERM during cleanups", func(t *testing.T) {
		root, file := workspaceWith(t, spinningCleanupWorkflow)
		state := t.TempDir()
		p := startImgflow(t, bin, nil, "run", "--root", root, "--state", state, "--max-steps", "100000000000", file)
		p.waitFor("spinning")
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
		time.Sleep(500 * time.Millisecond)
		p.stillRunning("the second signal: its cleanup spins")
		res := p.signal(syscall.SIGTERM)
		assert.Less(t, res.exitAfter, 3*time.Second)
		assert.Equal(t, -1, res.code, "killed by the signal itself\nstderr:\n%s", res.stderr)
		summary := runSummary(t, state, res.runID)
		assert.Equal(t, "interrupted", summary["status"])
		assert.Equal(t, true, summary["resumable"])
	})
}

// A run stopped by its memory budget failed: it was not cancelled.
func TestARunOverItsMemoryBudgetIsJournaledAsFailed(t *testing.T) {
	root, file := workspaceWith(t, applyGrowWorkflow)
	state := t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, "--max-memory", "300MiB", "--max-steps", "100000000000", file)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "memory budget exceeded")
	assert.NotContains(t, res.stderr, "was cancelled")
	m := runIDRE.FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	assert.Contains(t, res.stderr, "(resume with: imgflow run --resume "+m[1]+")")
	summary := runSummary(t, state, m[1])
	assert.Equal(t, "failed", summary["status"])
	assert.Contains(t, summary["error"], "memory budget exceeded")
	assert.Equal(t, true, summary["resumable"])
}
