//go:build !unix

package builtins

import "os"

// openNonBlocking opens path for reading (named pipes do not block an open
// on these systems the way they do on unix).
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }
