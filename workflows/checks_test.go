package workflows

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/internal/testtool"
)

// TestCheckScriptsAgreeWithTheLocalEvaluation runs the bash scripts
// lib/checks.star writes against real files and compares each verdict and
// line of output with what the local target's evaluation of the same
// predicates (guest.SimulateRunCommand) says about the same content.
func TestCheckScriptsAgreeWithTheLocalEvaluation(t *testing.T) {
	bash := testtool.Require(t, "bash", "install bash: the checks' scripts run in it")
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), mode))
		require.NoError(t, os.Chmod(p, mode))
		return p
	}
	cse := write("provision_configs.sh", "#!/bin/bash\necho cse\n", 0o744)
	rule := write("aks-mglru.conf", "w! /sys/kernel/mm/lru_gen/enabled - - - - 0\n", 0o644)
	missing := filepath.Join(dir, "nope.conf")
	content := &guest.GuestContent{Files: map[string]guest.GuestFile{
		cse:  {Mode: "0744", Text: "#!/bin/bash\necho cse\n"},
		rule: {Mode: "0644", Text: "w! /sys/kernel/mm/lru_gen/enabled - - - - 0\n"},
	}, Packages: map[string]string{"bcc": "0.29.0"}}

	checks := loadLib(t, "checks.star")
	call := func(fn string, args ...starlark.Value) starlark.Value {
		v, err := starlark.Call(&starlark.Thread{}, checks[fn], args, nil)
		require.NoError(t, err)
		return v
	}
	s := func(v string) starlark.Value { return starlark.String(v) }
	cases := []struct {
		name  string
		preds []starlark.Value
	}{
		{"modes-ok", []starlark.Value{call("file_mode", s(cse), s("0744")), call("file_mode", s(rule), s("0644"))}},
		{"mode-wrong", []starlark.Value{call("file_mode", s(rule), s("0744"))}},
		{"mode-missing", []starlark.Value{call("file_mode", s(missing), s("0744"))}},
		{"exists", []starlark.Value{call("file_exists", s(rule)), call("file_exists", s(missing))}},
		{"absent", []starlark.Value{call("file_absent", s(missing)), call("file_absent", s(rule))}},
		{"contains", []starlark.Value{call("file_contains", s(rule), s("/sys/kernel/mm/lru_gen/enabled")), call("file_contains", s(rule), s("min_ttl_ms"))}},
		{"bcc", []starlark.Value{call("package_version", s("bcc"), s("0.29.0"), s("echo 0.29.0"))}},
		{"bcc-old", []starlark.Value{call("package_version", s("bcc"), s("0.24.0"), s("echo 0.29.0"))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chk := call("check", append([]starlark.Value{s(c.name)}, c.preds...)...).(*starlarkstruct.Struct)
			scriptV, _ := chk.Attr("script")
			script := string(scriptV.(starlark.String))
			local, err := guest.GuestChecksFromScript(script)
			require.NoError(t, err)
			require.Len(t, local, len(c.preds), "the script carries its predicates")

			want := guest.SimulateRunCommand(local, content, 1<<30)
			cmd := exec.Command(bash, "-c", script)
			var stdout, stderr writerString
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, want.ExitCode, code, "exit code\n%s", script)
			assert.Equal(t, want.Output, stdout.String(), "stdout\n%s", script)
			assert.Equal(t, want.Error, stderr.String(), "stderr\n%s", script)
		})
	}
}

type writerString struct{ b []byte }

func (w *writerString) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
func (w *writerString) String() string              { return string(w.b) }

// loadLib executes lib/NAME (checks.star, scans.star: libraries without
// load()) with the dialect's struct and json.
func loadLib(t *testing.T, name string) starlark.StringDict {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(workspaceRoot(), "lib", name))
	require.NoError(t, err)
	pre := starlark.StringDict{"struct": starlark.NewBuiltin("struct", starlarkstruct.Make), "json": json.Module}
	globals, err := starlark.ExecFileOptions(&syntax.FileOptions{}, &starlark.Thread{}, "lib/"+name, src, pre)
	require.NoError(t, err)
	return globals
}
