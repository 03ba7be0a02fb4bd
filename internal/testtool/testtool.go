// Package testtool is how tests find the external tools they need
// (packer, qemu-img, actionlint, Azurite, bash): a test without its tool
// skips on a developer's machine but fails in CI (CI=true), where
// `make deps` installs every tool, so integration tests cannot silently
// stop running.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable stops t because a tool it needs is missing: why says what
// is missing, install how to get it. It fails under CI=true and skips
// otherwise.
func Unavailable(t testing.TB, why, install string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s but CI=true: CI must run this test; %s", why, install)
		return
	}
	t.Skipf("%s; to run this test, %s", why, install)
}

// Require returns the path of the named program on PATH, or stops t with
// Unavailable.
func Require(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Unavailable(t, name+" is not on PATH", install)
		return ""
	}
	return path
}
