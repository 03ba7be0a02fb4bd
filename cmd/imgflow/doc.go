package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/libdoc"
)

func cmdDoc(e *env, args []string) error {
	fs := newFlagSet("doc", e)
	update := fs.String("update", "", "rewrite the generated reference sections of this Markdown `file` (e.g. WORKFLOWS.md): the builtins, and the library from the lib/*.star beside it")
	_ = fs.Bool("markdown", true, "print the reference as Markdown (the default; WORKFLOWS.md holds it)")
	stubs := fs.String("stubs", "", "write imgflow.pyi, Python-style stubs of every builtin for editors, into `dir`")
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	reg := builtins.NewRegistry()
	if *stubs != "" {
		return writeStubs(e, reg, *stubs)
	}
	if *update == "" {
		fmt.Fprint(e.stdout, reg.Reference())
		return nil
	}
	doc, err := os.ReadFile(*update)
	if err != nil {
		return err
	}
	out, err := reg.SpliceReference(string(doc))
	if err != nil {
		return fmt.Errorf("%s: %w", *update, err)
	}
	mods, err := libdoc.ReadDir(filepath.Join(filepath.Dir(*update), "lib"), "lib")
	if err != nil {
		return fmt.Errorf("library reference: %w", err)
	}
	if out, err = libdoc.Splice(out, libdoc.Reference(mods)); err != nil {
		return fmt.Errorf("%s: %w", *update, err)
	}
	return os.WriteFile(*update, []byte(out), 0o644)
}

// writeStubs writes DIR/imgflow.pyi.
func writeStubs(e *env, reg *builtins.Registry, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "imgflow.pyi")
	if err := os.WriteFile(path, []byte(reg.Stubs()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s: point your editor's Python or Starlark language server at %s (e.g. stubPath / extraPaths)\n", path, dir)
	return nil
}
