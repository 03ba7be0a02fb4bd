//go:build !unix

package journal

import "os"

// lock is a no-op where flock is unavailable.
func lock(*os.File) error { return nil }
