// Package packertest finds the packer binary that tests run for real.
//
// imgflow is tested with packer 1.9.x (`make deps` builds 1.9.5 into
// .tools/bin): tests pin its machine-readable output and its validate
// messages, so another release is as good as none.
package packertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/testtool"
)

// Series is the packer release series imgflow is tested with.
const Series = "1.9."

// Install says how to get the packer imgflow is tested with.
const Install = "run `make deps` (it builds packer 1.9.5 with `go install github.com/hashicorp/packer@v1.9.5` into .tools/bin) and put .tools/bin first on PATH"

var versionRE = regexp.MustCompile(`Packer v(\d+\.\d+\.\d+)`)

// Require returns the path of the packer on PATH when it is packer 1.9.x.
// Otherwise the test is skipped, or, when CI=true, fails: CI must check
// imgflow against the real binary.
func Require(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("packer")
	if err != nil {
		unavailable(t, "packer is not on PATH")
		return ""
	}
	if why := check(path); why != "" {
		unavailable(t, why)
		return ""
	}
	return path
}

// checked keeps, per test binary, the verdict of `packer version` on each
// binary Require found, keyed by its path, size and modification time:
// the packer tests call Require in every test, and each `packer version`
// starts packer twice (it re-executes itself to catch its own panics),
// a quarter of a second of CPU for the same answer.
var checked struct {
	mu       sync.Mutex
	verdicts map[string]string // "" when it is packer 1.9.x, else why not
}

// check says why the packer at path is not one the tests can run, or ""
// when it is packer 1.9.x.
func check(path string) string {
	key := path
	if fi, err := os.Stat(path); err == nil {
		key = fmt.Sprintf("%s\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano())
	}
	checked.mu.Lock()
	defer checked.mu.Unlock()
	if why, ok := checked.verdicts[key]; ok {
		return why
	}
	why, ran := version(path)
	if ran { // a run that failed (a timeout on a busy machine) is not kept
		if checked.verdicts == nil {
			checked.verdicts = map[string]string{}
		}
		checked.verdicts[key] = why
	}
	return why
}

// version runs `packer version`: "" when it says 1.9.x, else why not;
// ran is false when packer did not run to its end.
func version(path string) (why string, ran bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return "`" + path + " version` failed: " + err.Error(), false
	}
	m := versionRE.FindSubmatch(out)
	if m == nil || !strings.HasPrefix(string(m[1]), Series) {
		return path + " is not packer " + Series + "x: it says " + strings.TrimSpace(string(out)), true
	}
	return "", true
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	testtool.Unavailable(t, why, "the real-packer tests need packer "+Series+"x: "+Install)
}
