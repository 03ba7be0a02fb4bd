//go:build !unix

package packer

import (
	"fmt"
	"os"
)

// serveVarFile writes data to a 0600 temporary file where there are no
// named pipes, in dir ("" = os.TempDir()); stop removes it.
func serveVarFile(data []byte, dir string) (string, func(), error) {
	f, err := os.CreateTemp(dir, "imgflow-packer-vars-*.json")
	if err != nil {
		return "", nil, fmt.Errorf("create var-file: %w", err)
	}
	name := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", nil, fmt.Errorf("write var-file: %w", err)
	}
	return name, func() { _ = os.Remove(name) }, nil
}
