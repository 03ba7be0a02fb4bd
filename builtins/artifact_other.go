//go:build !linux

package builtins

// writeUnnamed: no unnamed files here (see artifact_linux.go).
func writeUnnamed(_, _ string, _ []byte, _ func()) (bool, error) { return false, nil }
