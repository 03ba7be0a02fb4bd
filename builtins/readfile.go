package builtins

import (
	"fmt"
	"io"
)

// MaxReadSize bounds what read_text and read_json read (as --vars-file is
// bounded): a workflow reads manifests and rules, not disk images, and an
// unbounded read of a large file would exhaust the machine's memory.
const MaxReadSize = 16 << 20

// readRegularFile reads a regular file of at most limit bytes. Anything
// else is refused before a byte is read: a named pipe or device would
// block the run forever, a larger file would take its memory. The file is
// opened non-blocking so that opening a pipe cannot hang either.
func readRegularFile(path string, limit int64) ([]byte, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): only files can be read", info.Mode().Type())
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%d bytes is more than the %d MiB a workflow may read: keep large data out of the workflow (pass a path to the builtin that uses it)", info.Size(), limit>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("grew past the %d MiB a workflow may read while it was read", limit>>20)
	}
	return data, nil
}
