package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// crashedTestVM runs workflow on the local state in dir and crashes it
// right after test_vm's VM was created, as a dead process would: the
// throwaway resource group with the VM and its disk is left behind.
func crashedTestVM(t *testing.T, dir, workflow string) {
	t.Helper()
	ws, err := localpacker.NewWorkspace(repoRoot(t))
	require.NoError(t, err)
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	now := time.Now().UTC()
	j, err := journal.Create(filepath.Join(dir, "runs"), journal.Record{RunID: "crashed", RunTime: &now, Workflow: workflow, Target: "local"})
	require.NoError(t, err)
	defer j.Close()
	set := faults.NewFaults(map[string]faults.Fault{"CreateVM": {Crash: true}})
	res := interp.Run(context.Background(), "//"+workflow, interp.Config{
		Workspace: ws, Registry: builtins.NewRegistry(), Info: builtins.RunInfo{ID: "crashed", Time: now}, Journal: j,
	}, interp.Target{Apply: faults.WithFaults(p, set), Validate: overlay.New(p)})
	require.True(t, res.Crashed, "%v", res.Err)
	require.Len(t, testVMGroups(t, p), 1, "the crash leaves the test VM's group")
}

// testVMGroups lists test_vm's resource groups with their VMs.
func testVMGroups(t *testing.T, p *local.Provider) map[string]int {
	out := map[string]int{}
	for _, rg := range p.Snapshot().ResourceGroups {
		if strings.HasPrefix(rg.Name, "imgflow-testvm-") {
			out[rg.Name] = len(rg.VMs)
		}
	}
	return out
}

func testVMGroupsIn(t *testing.T, dir string) map[string]int {
	t.Helper()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	return testVMGroups(t, p)
}

func TestTestVMCrashIsCleanedByResume(t *testing.T) {
	for _, wf := range []string{"workflows/linux.star", "workflows/gen2.star"} {
		t.Run(filepath.Base(wf), func(t *testing.T) {
			dir := t.TempDir()
			crashedTestVM(t, dir, wf)
			for _, vms := range testVMGroupsIn(t, dir) {
				assert.Equal(t, 1, vms, "the VM was made before the crash")
			}
			res := imgflow(t, "run", "--root", repoRoot(t), "--state", dir, "--resume", "crashed")
			require.Equal(t, 0, res.code, res.String())
			assert.Contains(t, res.stdout, "test_vm")
			assert.Empty(t, testVMGroupsIn(t, dir), "the resumed run deletes the group, VM and disk the crashed attempt made")
			assert.Empty(t, disksIn(t, dir))
		})
	}
}

func TestTestVMCrashIsCleanedByGC(t *testing.T) {
	for _, wf := range []string{"workflows/linux.star", "workflows/gen2.star"} {
		t.Run(filepath.Base(wf), func(t *testing.T) {
			dir := t.TempDir()
			crashedTestVM(t, dir, wf)
			groups := testVMGroupsIn(t, dir)

			res := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s", "--dry-run")
			require.Equal(t, 0, res.code, res.String())
			for g := range groups {
				assert.Contains(t, res.stdout, "would delete resource group "+g)
			}
			assert.Equal(t, groups, testVMGroupsIn(t, dir), "a dry run changes nothing")

			res = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
			require.Equal(t, 0, res.code, res.String())
			assert.Contains(t, res.stdout, "0 failed")
			assert.Empty(t, testVMGroupsIn(t, dir), "gc deletes the test VM's group with the VM and its disk")
			assert.Empty(t, disksIn(t, dir))
		})
	}
}
