package main

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/imgflow/imgflow/builtins"
)

// planTempDirMiddle marks a plan's temporary directory among runs' ones:
// $TMPDIR/imgflow-run-YYYYMMDD-plan-NNN.
const planTempDirMiddle = "-plan-"

// planTempDir makes the temporary directory of one plan pass (its packer
// builds' directories), beside the runs' (builtins.RunTempDir), named
// after the plan's id plus a random suffix: plans of one day share the id
// but not the directory. remove deletes it; gc deletes one a killed plan
// left (sweepPlanTempDirs).
func planTempDir(info builtins.RunInfo) (dir string, remove func(), err error) {
	dir, err = os.MkdirTemp("", filepath.Base(builtins.RunTempDir(strings.TrimSuffix(info.ID, "-plan")))+planTempDirMiddle)
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// sweepPlanTempDirs removes the temporary directories of plans that were
// killed: those not changed for olderThan (a plan that is running writes
// in its own). It returns the directories removed.
func sweepPlanTempDirs(olderThan time.Duration) []string {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "imgflow-run-*"+planTempDirMiddle+"*"))
	var removed []string
	for _, dir := range matches {
		info, err := os.Stat(dir)
		if err != nil || !info.IsDir() || time.Since(info.ModTime()) < olderThan {
			continue
		}
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}
