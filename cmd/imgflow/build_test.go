package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildCmd builds the module's command ./cmd/name once for the package's
// tests (a link costs seconds of CPU), into the directory TestMain made,
// and returns the binary's path. It builds as the doc examples' `go
// build` does in their copies of the repository (-trimpath, no VCS
// stamp): a copy of this binary at an example's output path is what that
// `go build` would write, so go finds it up to date instead of linking
// it again (seedDocBuilds).
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	built.mu.Lock()
	b := built.cmds[name]
	if b == nil {
		b = &builtCmd{}
		if built.cmds == nil {
			built.cmds = map[string]*builtCmd{}
		}
		built.cmds[name] = b
	}
	built.mu.Unlock()
	b.once.Do(func() {
		bin := filepath.Join(built.dir, name)
		cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "github.com/imgflow/imgflow/cmd/"+name)
		cmd.Env = append(os.Environ(), "GOFLAGS="+docGoFlags())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
			return
		}
		b.bin = bin
	})
	require.NoError(t, b.err)
	return b.bin
}

// built holds the binaries buildCmd builds, in dir.
var built struct {
	dir  string
	mu   sync.Mutex
	cmds map[string]*builtCmd
}

type builtCmd struct {
	once sync.Once
	bin  string
	err  error
}

// docGoFlags is GOFLAGS for the doc examples' go commands: -trimpath
// compiles imgflow's packages under the module's path rather than the
// copy's directory, so the Go build cache has them (make's builds are
// -trimpath too); otherwise each example recompiles all of imgflow
// (minutes).
func docGoFlags() string {
	return strings.TrimSpace("-trimpath " + os.Getenv("GOFLAGS"))
}
