package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestVersionComesFromTheBuild(t *testing.T) {
	vcs := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "04e1500abcdef0123456789abcdef0123456789a"},
			{Key: "vcs.time", Value: "2026-12-06T02:37:49Z"},
			{Key: "vcs.modified", Value: modified},
		}}
	}
	assert.Equal(t, "v0.0.0-20261206023749-04e1500abcde", versionOf(vcs("false")), "a Go pseudo-version of the commit")
	assert.Equal(t, "v0.0.0-20261206023749-04e1500abcde+dirty", versionOf(vcs("true")))
	assert.Equal(t, "v1.2.3", versionOf(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}), "go install …@v1.2.3")
	assert.Equal(t, "dev", versionOf(&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}))
}

func TestVersionFlag(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		res := imgflow(t, args...)
		assert.Equal(t, 0, res.code, "%v: %s", args, res)
		assert.Regexp(t, `^imgflow \S+\n$`, res.stdout)
	}
}
