package main

import (
	"fmt"
	"os"

	"github.com/imgflow/imgflow/builtins"
)

func cmdDoc(e *env, args []string) error {
	fs := newFlagSet("doc", e)
	update := fs.String("update", "", "rewrite the generated reference section of this Markdown `file` (e.g. WORKFLOWS.md)")
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	reg := builtins.NewRegistry()
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
	return os.WriteFile(*update, []byte(out), 0o644)
}
