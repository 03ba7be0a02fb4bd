package interp_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The production layers know nothing simulated: fault injection, the
// packer simulator, the local target and the fake ARM are plugged in by
// their callers (tests, cmd/imgflow, the emulator), never imported below
// them. (The dry run, cloud/overlay over cloud/azsim, is production: it
// is the plan.)
func TestBuiltinsAndInterpImportNoSimulator(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../builtins", "../interp").Output()
	require.NoError(t, err)
	const module = "github.com/imgflow/imgflow/"
	for _, sim := range []string{"cloud/faults", "packer/localsim", "cloud/local", "cloud/azure/fakearm"} {
		for _, dep := range strings.Fields(string(out)) {
			assert.NotEqual(t, module+sim, dep, "builtins or interp depends on the simulator %s", sim)
		}
	}
}
