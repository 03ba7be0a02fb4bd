// Package packertest finds the packer binary that tests run for real.
//
// imgflow is tested with packer 1.9.x (`make deps` builds 1.9.5 into
// .tools/bin): tests pin its machine-readable output and its validate
// messages, so another release is as good as none.
package packertest

import (
	"context"
	"github.com/imgflow/imgflow/internal/testtool"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		unavailable(t, "`"+path+" version` failed: "+err.Error())
		return ""
	}
	m := versionRE.FindSubmatch(out)
	if m == nil || !strings.HasPrefix(string(m[1]), Series) {
		unavailable(t, path+" is not packer "+Series+"x: it says "+strings.TrimSpace(string(out)))
		return ""
	}
	return path
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	testtool.Unavailable(t, why, "the real-packer tests need packer "+Series+"x: "+Install)
}
