// Command mkvhd writes a small fixed VHD with a recognisable payload, for
// sample runs and tests (testdata/flatcar/…vhd is made with it):
//
//	go run ./scripts/mkvhd -size 4 -o testdata/flatcar/flatcar-linux-test-amd64.vhd
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/imgflow/imgflow/vhd"
)

func main() {
	sizeMiB := flag.Int64("size", 4, "virtual size in MiB")
	out := flag.String("o", "", "output file")
	flag.Parse()
	if err := write(*out, *sizeMiB); err != nil {
		fmt.Fprintln(os.Stderr, "mkvhd:", err)
		os.Exit(1)
	}
}

// write creates the VHD with a marker in its first sector and one in the
// middle, so copies can be checked by content and holes stay holes.
func write(path string, sizeMiB int64) error {
	if path == "" {
		return fmt.Errorf("-o is required")
	}
	if _, err := vhd.CreateFixed(path, sizeMiB*vhd.MiB, true); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("imgflow sample disk: not bootable\n"), 0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte("middle of the sample disk\n"), sizeMiB*vhd.MiB/2); err != nil {
		return err
	}
	return f.Close()
}
