package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown --var stops plan and run before they print a plan, validate
// with packer or change anything, naming the param that was likely meant.
func TestUnknownVarRefusedBeforeAnyWork(t *testing.T) {
	root := repoRoot(t)
	flatcar := filepath.Join(root, "workflows", "flatcar.star")
	for _, cmd := range []string{"plan", "run"} {
		state := t.TempDir()
		res := imgflow(t, cmd, "--root", root, "--state", state, flatcar, "--var", "replication=3")
		assert.Equal(t, 1, res.code, res.String())
		assert.Empty(t, res.stdout, "%s printed before refusing the var", cmd)
		assert.Contains(t, res.stderr, "unknown --var replication: the workflow declares no such param")
		assert.Contains(t, res.stderr, `channel (default "stable"): release channel`)
		assertStateEmpty(t, state)

		res = imgflow(t, cmd, "--root", root, "--state", state, flatcar, "--var", "chanel=beta")
		assert.Equal(t, 1, res.code, res.String())
		assert.Empty(t, res.stdout)
		assert.Contains(t, res.stderr, "--var chanel: did you mean channel?")
	}
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--output", "json", flatcar, "--var", "replication=3")
	assert.Equal(t, 1, res.code, res.String())
	assert.Empty(t, res.stdout)
}

func TestDidYouMeanCommand(t *testing.T) {
	res := imgflow(t, "plna")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `unknown command "plna": did you mean "plan"?`)
	assert.NotContains(t, res.stderr, "Usage:", "a typo gets a hint, not the whole usage")

	// An unknown command is the same usage error however it is asked.
	direct, viaHelp := imgflow(t, "nosuch"), imgflow(t, "help", "nosuch")
	assert.Equal(t, 2, direct.code)
	assert.Equal(t, direct.code, viaHelp.code)
	assert.Contains(t, viaHelp.stderr, `unknown command "nosuch"`)
}

func TestDidYouMeanFlag(t *testing.T) {
	res := imgflow(t, "plan", "-vra", "x=1", "workflows/flatcar.star")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "flag provided but not defined: -vra")
	assert.Contains(t, res.stderr, "Did you mean --var?")

	res = imgflow(t, "plan", "--zzzzzz")
	assert.Equal(t, 2, res.code)
	assert.NotContains(t, res.stderr, "Did you mean")
}

// A choice differing in case is refused (choices are exact), naming the
// choice meant.
func TestDidYouMeanChoice(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), filepath.Join(root, "workflows", "flatcar.star"), "--var", "channel=Stable")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `param "channel": "Stable" is not one of the choices stable, beta, alpha, lts2024: did you mean --var channel=stable?`)
	assert.Contains(t, res.stderr, "workflows/flatcar.star:10:")
}
