package packer

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// initPlugins runs `packer init <template>` for a template that declares
// required_plugins, so that packer installs them (into its default plugin
// directory) before the build; packer 1.9.5 refuses to build with a
// missing plugin ("Did you run packer init for this project ?").
// Installed plugins that match are left alone by packer.
func (r *Runner) initPlugins(ctx context.Context, p *prepared, file string, plugins map[string]Plugin) error {
	names := make([]string, 0, len(plugins))
	for _, pl := range plugins {
		names = append(names, fmt.Sprintf("%s %s", pl.Source, pl.Version))
	}
	sort.Strings(names)
	args := []string{"init", file}
	out := r.printer()
	red := newRedactor(p.secrets)
	out(red.redact("packer " + strings.Join(args, " ")))
	lines := &plainLines{print: out, redact: red}
	ran, err := r.exec(ctx, p.workDir, p.env, args, lines.handle, lines.handle)
	if err != nil {
		return fmt.Errorf("packer init %s: %w", file, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("packer init %s: %w", file, err)
	}
	if ran.code != 0 || ran.waitErr != nil {
		msg := fmt.Sprintf("packer init %s failed (exit status %d) installing %s", file, ran.code, strings.Join(names, ", "))
		if len(lines.tail) > 0 {
			msg += ":\n  " + strings.Join(lines.tail, "\n  ")
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// ReadPluginConfig reads the required_plugins of an HCL file that holds
// only a packer block: the sidecar a legacy JSON template is installed
// with (image-builder's packer/config.pkr.hcl and packer/azure/config.pkr.hcl,
// which its make deps-azure runs packer init on). It fails for a file that
// requires nothing, so a wrong path is caught before packer runs.
func ReadPluginConfig(path string) (map[string]Plugin, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("packer plugin config: %w", err)
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("packer plugin config %s: %w", path, diags)
	}
	p := &hclParser{t: newTemplate()}
	for _, b := range file.Body.(*hclsyntax.Body).Blocks {
		if b.Type == "packer" {
			p.packerBlock(b)
		}
	}
	if len(p.errs) > 0 {
		return nil, fmt.Errorf("packer plugin config %s: %w", path, p.errs)
	}
	if len(p.t.RequiredPlugins) == 0 {
		return nil, fmt.Errorf("packer plugin config %s: no packer { required_plugins { … } } block: packer init would install nothing", path)
	}
	return p.t.RequiredPlugins, nil
}
