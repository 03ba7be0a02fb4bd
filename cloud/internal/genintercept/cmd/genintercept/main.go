// Command genintercept writes cloud/intercept_gen.go, the hooked methods
// of cloud's provider interceptor, from the cloud.Provider interface. Run
// it with go generate ./cloud/ (it works in the current directory).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/cloud/internal/genintercept"
)

func main() {
	src, err := genintercept.Generate(genintercept.Cloud)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genintercept:", err)
		os.Exit(1)
	}
	out := filepath.Join(genintercept.Cloud.Dir, genintercept.Cloud.Output)
	if err := os.WriteFile(out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genintercept:", err)
		os.Exit(1)
	}
}
