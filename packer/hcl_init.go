package packer

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// initPlugins runs `packer init <template>` for a template that declares
// required_plugins, so that packer installs them (into its default plugin
// directory) before the build; packer 1.9.5 refuses to build with a
// missing plugin ("Did you run packer init for this project ?").
// Installed plugins that match are left alone by packer.
func (r *Runner) initPlugins(ctx context.Context, p *prepared) error {
	names := make([]string, 0, len(p.tpl.RequiredPlugins))
	for _, pl := range p.tpl.RequiredPlugins {
		names = append(names, fmt.Sprintf("%s %s", pl.Source, pl.Version))
	}
	sort.Strings(names)
	args := []string{"init", p.template}
	out := r.printer()
	red := newRedactor(p.secrets)
	out(red.redact("packer " + strings.Join(args, " ")))
	lines := &plainLines{print: out, redact: red}
	ran, err := r.exec(ctx, p.workDir, p.env, args, lines.handle, lines.handle)
	if err != nil {
		return fmt.Errorf("packer init %s: %w", p.template, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("packer init %s: %w", p.template, err)
	}
	if ran.code != 0 || ran.waitErr != nil {
		msg := fmt.Sprintf("packer init %s failed (exit status %d) installing %s", p.template, ran.code, strings.Join(names, ", "))
		if len(lines.tail) > 0 {
			msg += ":\n  " + strings.Join(lines.tail, "\n  ")
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}
