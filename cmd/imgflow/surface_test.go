package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flagHelpRE matches a flag of -h and the first line of its sentence.
var flagHelpRE = regexp.MustCompile(`(?m)^  (--?[a-z][a-z-]*)(?: \S+)?\n      (\S.*)$`)

func TestEveryCommandHelpHasADescriptionAnExampleAndItsFlags(t *testing.T) {
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			res := imgflow(t, c.name, "-h")
			require.Equal(t, 0, res.code, res.String())
			assert.Empty(t, res.stderr, "-h is not an error")
			assert.True(t, strings.HasPrefix(res.stdout, "Usage:\n  imgflow "+c.name), res.stdout)
			require.NotEmpty(t, c.description)
			assert.Contains(t, oneLine(res.stdout), c.description)
			require.Contains(t, c.example, "imgflow "+c.name)
			assert.Contains(t, res.stdout, "\nExample:\n  "+c.example+"\n")

			described := map[string]string{}
			for _, m := range flagHelpRE.FindAllStringSubmatch(res.stdout, -1) {
				described[m[1]] = m[2]
			}
			for _, f := range declaredFlags(context.Background(), c) {
				assert.NotEmpty(t, described[f], "%s %s has no sentence in -h:\n%s", c.name, f, res.stdout)
			}
		})
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestHelpCommandIsTheCommandsHelp(t *testing.T) {
	a, b := imgflow(t, "help", "gc"), imgflow(t, "gc", "-h")
	require.Equal(t, 0, a.code, a.String())
	assert.Equal(t, b.stdout, a.stdout)
	assert.Equal(t, imgflow(t, "frobnicate").code, imgflow(t, "help", "frobnicate").code, "the same usage error either way")

	usage := imgflow(t, "--help")
	require.Equal(t, 0, usage.code)
	for _, c := range commands() {
		if c.hidden {
			assert.NotContains(t, usage.stdout, c.name)
		} else {
			assert.Regexp(t, `(?m)^  `+c.name+` +`+regexp.QuoteMeta(c.summary)+`$`, usage.stdout)
		}
	}
}

func TestABadFlagPointsToHelp(t *testing.T) {
	res := imgflow(t, "state", "--no-such-flag")
	assert.Equal(t, 2, res.code)
	assert.Empty(t, res.stdout, "a usage error prints nothing on stdout")
	assert.Contains(t, res.stderr, "flag provided but not defined: -no-such-flag")
	assert.Contains(t, res.stderr, "Run 'imgflow state -h' for its flags.")
}

// A shared flag is declared once: every command that takes it describes
// it with the same sentence and default.
func TestSharedFlagsMeanTheSameEverywhere(t *testing.T) {
	shared := []string{"root", "state", "target", "subscription", "storage-auth", "credential", "cloud", "journal", "output", "var", "vars-file"}
	takenBy := map[string][]string{}
	seen := map[string]*flag.Flag{}
	for _, c := range commands() {
		var fs *flag.FlagSet
		e := &env{stdout: &strings.Builder{}, stderr: &strings.Builder{}, declared: func(f *flag.FlagSet) {
			if fs == nil {
				fs = f
			}
		}}
		require.NoError(t, c.run(context.Background(), e, []string{"-h"}))
		if fs == nil {
			continue
		}
		for _, name := range shared {
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			takenBy[name] = append(takenBy[name], c.name)
			if first, ok := seen[name]; ok {
				assert.Equal(t, first.Usage, f.Usage, "--%s of %s", name, c.name)
				assert.Equal(t, first.DefValue, f.DefValue, "--%s of %s", name, c.name)
			} else {
				seen[name] = f
			}
		}
	}
	assert.Subset(t, takenBy["root"], []string{"run", "plan", "gc", "runs", "state", "test", "check", "lint"})
	assert.Subset(t, takenBy["state"], []string{"run", "plan", "gc", "runs", "state"})
	assert.Subset(t, takenBy["target"], []string{"run", "plan", "gc"})
	assert.Subset(t, takenBy["journal"], []string{"run", "gc", "runs"})
	assert.Subset(t, takenBy["output"], []string{"run", "plan", "test", "state", "runs"})
	assert.Subset(t, takenBy["var"], []string{"run", "plan"})
}

func TestDeprecatedJSONFlagWarns(t *testing.T) {
	state := t.TempDir()
	res := imgflow(t, "runs", "--state", state, "--json")
	require.Equal(t, 0, res.code, res.String())
	assert.JSONEq(t, `{"journal": `+strconv.Quote(filepath.Join(state, "runs"))+`, "runs": []}`, res.stdout)
	assert.Contains(t, res.stderr, "warning: --json is deprecated: use --output json")
}

func TestBashCompletesEveryCommand(t *testing.T) {
	requireBash(t)
	res := imgflow(t, "completion", "bash")
	require.Equal(t, 0, res.code, res.String())
	script, root := res.stdout, repoRoot(t)

	var listed []string
	for _, c := range commands() {
		if !c.hidden {
			listed = append(listed, c.name)
		}
	}
	assert.Contains(t, listed, "gc")
	assert.ElementsMatch(t, listed, completeBash(t, script, root, "imgflow", ""))
	assert.Equal(t, []string{"gc"}, completeBash(t, script, root, "imgflow", "g"))
	assert.Empty(t, completeBash(t, script, root, "imgflow", "__"), "hidden commands are not offered")
	assert.Equal(t, []string{"--older-than"}, completeBash(t, script, root, "imgflow", "gc", "--ol"))
	assert.Equal(t, []string{"aad", "auto"}, completeBash(t, script, root, "imgflow", "gc", "--storage-auth", "a"))
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		flags := declaredFlags(context.Background(), c)
		if len(flags) > 0 {
			assert.ElementsMatch(t, flags, completeBash(t, script, root, "imgflow", c.name, "-"), c.name)
		}
	}
}

func TestBashCompletesAParamsChoices(t *testing.T) {
	requireBash(t)
	res := imgflow(t, "completion", "bash")
	require.Equal(t, 0, res.code, res.String())
	script, root := res.stdout, repoRoot(t)

	// flatcar.star's choices are computed (choices = flatcar.CHANNELS).
	assert.Equal(t, []string{"channel=beta"},
		completeBash(t, script, root, "imgflow", "run", "workflows/flatcar.star", "--var", "channel=b"))
	// The same with "=" in COMP_WORDBREAKS, bash's default.
	assert.Equal(t, []string{"amd64", "arm64"},
		completeBash(t, script, root, "imgflow", "plan", "workflows/flatcar.star", "--var", "arch", "=", ""))
	assert.Empty(t, completeBash(t, script, root, "imgflow", "run", "workflows/flatcar.star", "--var", "version="), "no choices")
}

func TestCompleteParamsChoicesOfALiteralList(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.star")
	require.NoError(t, os.WriteFile(file, []byte(`region = param("region", default = "westeurope", choices = ["westeurope", "eastus"])
size = param("size", default = "s")
`), 0o644))
	res := imgflow(t, "__complete-params", "--root", dir, file, "region")
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "westeurope\neastus\n", res.stdout)
	res = imgflow(t, "__complete-params", "--root", dir, file, "size")
	require.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stdout)
}

func TestZshCompletionListsEveryCommand(t *testing.T) {
	res := imgflow(t, "completion", "zsh")
	require.Equal(t, 0, res.code, res.String())
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		assert.Contains(t, res.stdout, "'"+c.name+":"+strings.ReplaceAll(c.summary, "'", `'\''`)+"'")
	}
	assert.Contains(t, res.stdout, "compset -P '*='", "--var name= completes the choices")
}

// A command() step's output is the tool's output: its own lines, not
// file:line:col: lines that read as diagnostics; print() keeps its
// position.
func TestCommandOutputIsShownAsOutput(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "tools.star")
	require.NoError(t, os.WriteFile(file, []byte(`command(["echo", "built the tools"])
print("done")
`), 0o644))

	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), file)
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `(?m)^\[echo\] built the tools$`, res.stdout)
	assert.Regexp(t, `(?m)^tools\.star:2:6: done$`, res.stdout)
	assert.NotContains(t, res.stderr, "built the tools")

	res = imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--output", "json", file)
	require.Equal(t, 0, res.code, res.String())
	assert.True(t, json.Valid([]byte(res.stdout)), res.stdout)
	assert.Regexp(t, `(?m)^\[echo\] built the tools$`, res.stderr, "JSON mode: the tool's output is on stderr")
}

// README's command list is the usage's: every command, with its summary.
func TestReadmeListsEveryCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		assert.Regexp(t, `(?m)^imgflow `+c.name+` +`+regexp.QuoteMeta(c.summary)+`$`, string(readme))
	}
}
