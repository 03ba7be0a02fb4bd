package testtool

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB that records how it was stopped.
type recorder struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.msg = format
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = true
	r.msg = format
}

func TestRequireFailsInCIAndSkipsElsewhere(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("CI", "true")
	r := &recorder{TB: t}
	assert.Empty(t, Require(r, "imgflow-no-such-tool", "make deps"))
	assert.True(t, r.failed, "a missing tool fails the test in CI")
	assert.False(t, r.skipped)

	t.Setenv("CI", "")
	r = &recorder{TB: t}
	Require(r, "imgflow-no-such-tool", "make deps")
	assert.True(t, r.skipped, "a missing tool skips the test outside CI")
	assert.False(t, r.failed)
}

func TestRequireFindsATool(t *testing.T) {
	t.Setenv("CI", "true")
	r := &recorder{TB: t}
	assert.NotEmpty(t, Require(r, "go", "install Go"))
	assert.False(t, r.failed || r.skipped)
}
