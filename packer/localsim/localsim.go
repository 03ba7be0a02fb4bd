// Package localsim simulates packer 1.6.6's azure-arm builder on a
// cloud.Provider, for imgflow's local target and its validation pass.
//
// No VM boots and no provisioner runs. The template is loaded and its
// variables checked exactly as for a real build (packer.Template.RenderBuilds,
// with {{env}} read from BuildRequest.Env only, so that a plan does not
// depend on the machine that makes it), then the simulation creates, through the provider, what the azure-arm
// builder would leave behind, read from the rendered builder configuration:
//
//   - VHD mode (capture_container_name, capture_name_prefix, storage_account,
//     resource_group_name): a page blob
//     system/Microsoft.Compute/Images/<container>/<prefix>-osDisk.<uuid>.vhd
//     in that storage account, which must exist. The blob is a real fixed VHD
//     of os_disk_size_gb, sparse, with a short marker in its first sector.
//   - Managed image mode (managed_image_name,
//     managed_image_resource_group_name): a managed image made from such a
//     VHD, staged in a storage account "pkr<hash>" of the image's resource
//     group and deleted once the image holds its content (the local cloud
//     cannot delete storage accounts, so the empty account stays).
//   - shared_image_gallery_destination: a gallery image version made from
//     the managed image, which fails as in Azure when the gallery or the
//     definition does not exist.
//   - shared_image_gallery_destination alone (no managed image, no VHD):
//     the VM published straight to the gallery, as the azure plugin does
//     since 1.0 and as Arm64 and ConfidentialVM builds must. No managed
//     image is left; the OS disk is staged like a managed image's and
//     deleted once the version holds it. The artifact is the plugin
//     1.4.0's (packer 1.9.5) gallery-only one.
//   - skip_create_image: nothing is captured or published, no artifact.
//
// File provisioners with "direction": "download" write, where packer would
// (relative to BuildRequest.WorkDir), what the simulation knows of the VM
// (downloads.go): an uploaded file as uploaded, anything else a
// description of the build.
//
// Before anything is created, the rules Azure applies only after an hour
// of provisioning are checked (cloud.ValidateCapture): no managed image
// from an Arm64 VM or a confidential VM, a specialized build only into a
// Specialized definition (and a generalized one only into a Generalized),
// the VM's architecture that of the definition. A marketplace image's
// architecture is read from its SKU (Arm64 when it names arm64), a gallery
// source's from its definition.
//
// Sources are checked as Azure would: a shared_image_gallery version or an
// image_url blob must exist. A marketplace image cannot be checked.
//
// Names are deterministic: the <uuid> derives from the template, the build
// name, the non-secret variable values and the staged files, so a rerun or
// resumed run finds what an earlier run made and reuses it (outcome
// "exists"); a product that exists but was made by another build is an
// error, as for packer.
//
// The result has the shape of packer.Runner's: the artifact string is
// azure-arm's, parsed with packer.ParseAzureARMArtifact.
package localsim

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/packer"
)

// captureContainer is the container azure-arm captures VHDs into.
const captureContainer = "system"

// DefaultOSDiskGB is the OS disk size of a build whose template sets no
// os_disk_size_gb and whose source size is unknown (a marketplace image):
// the size of Azure's Linux marketplace images.
const DefaultOSDiskGB = 30

// Builder simulates azure-arm builds on Provider. It holds no state
// between calls and may be used concurrently.
type Builder struct {
	Provider cloud.Provider
	// TempDir holds the VHD files while they upload ("" = os.TempDir()).
	TempDir string
	// Now is the clock for end-of-life checks (nil = time.Now).
	Now func() time.Time
	// Sums, when set, remembers the sums of large staged files across
	// builds (nil: every build hashes its staged files).
	Sums *packer.SumCache
	// Subscriptions, when set, reaches the subscriptions of the tenant
	// other than Provider's: a shared_image_gallery_destination (or
	// source) whose subscription is one of them is published there, as
	// packer does with the build's credential. Nil: Provider's only.
	Subscriptions func(ctx context.Context, sub string) (cloud.Provider, error)
}

// New returns a Builder for p.
func New(p cloud.Provider) *Builder { return &Builder{Provider: p} }

// Build simulates `packer build` for req (see the package doc).
func (b *Builder) Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error) {
	res, _, err := b.BuildOutcome(ctx, req)
	return res, err
}

// BuildOutcome is Build that also reports whether anything was created
// (cloud.Created) or every product already existed (cloud.Exists).
func (b *Builder) BuildOutcome(ctx context.Context, req packer.BuildRequest) (*packer.Result, cloud.Outcome, error) {
	p, err := prepare(req, b.Sums)
	if err != nil {
		return nil, "", err
	}
	// Parse and check every selected build before any of them changes
	// anything.
	guest, err := p.guestRecord()
	if err != nil {
		return nil, "", fmt.Errorf("packer build %s: %w", p.display, err)
	}
	var sims []*simulation
	var errs []error
	for _, name := range p.builds {
		bl := p.rendered.Builders[name]
		if bl.Type != "azure-arm" {
			errs = append(errs, fmt.Errorf("build %s is of type %s: the local target simulates only azure-arm builds; select those with only=[…]", name, bl.Type))
			continue
		}
		cfg, err := parseConfig(name, p.rendered.Configs[name], p.rendered.UnsetEnv[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sims = append(sims, &simulation{b: b, cfg: cfg, id: p.identity(name), guest: guest})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", fmt.Errorf("packer template %s: %w", p.display, err)
	}
	for _, s := range sims {
		if err := s.check(ctx); err != nil {
			return nil, "", fmt.Errorf("packer build %s (simulated azure-arm): %w", p.display, err)
		}
	}
	res := &packer.Result{}
	outcome := cloud.Exists
	for _, s := range sims {
		// Provisioners run before the capture: the downloads are there
		// whatever the build publishes.
		if err := p.writeDownloads(s); err != nil {
			return res, "", fmt.Errorf("packer build %s (simulated azure-arm): %w", p.display, err)
		}
		if s.cfg.skipCreateImage {
			// The plugin provisions the VM, then captures and publishes
			// nothing ("Skipping image creation...") and reports no artifact.
			res.Builds = append(res.Builds, packer.BuildArtifacts{Name: s.cfg.build})
			continue
		}
		art, out, err := s.run(ctx)
		if err != nil {
			return res, "", fmt.Errorf("packer build %s (simulated azure-arm): %w", p.display, err)
		}
		if out == cloud.Created {
			outcome = cloud.Created
		}
		res.Builds = append(res.Builds, packer.BuildArtifacts{Name: s.cfg.build, Artifacts: []packer.Artifact{art}})
		az := art.Azure
		if res.ManagedImageID == "" {
			res.ManagedImageID = az.ManagedImageID
		}
		if res.GalleryImageVersionID == "" {
			res.GalleryImageVersionID = az.ManagedImageSharedImageGalleryID
		}
		if res.OSDiskVHDURL == "" {
			res.OSDiskVHDURL = az.VHDURL()
		}
		if res.ResourceGroup == "" {
			res.ResourceGroup = az.ManagedImageResourceGroupName
		}
	}
	return res, outcome, nil
}

// prepared is a loaded, checked and rendered request.
type prepared struct {
	tpl      *packer.Template
	tplData  []byte
	display  string
	values   map[string]string
	secret   map[string]bool
	env      map[string]string
	envKeys  []string // the non-secret ones, sorted
	rendered *packer.Rendering
	builds   []string
	staged   *stagedTree // the staged files, nil when none
	// downloads are the template's download provisioners.
	downloads []packer.Download
	// workDir is packer's working directory, where relative downloads
	// land ("" = the current directory, as for packer).
	workDir string
}

func prepare(req packer.BuildRequest, sums *packer.SumCache) (*prepared, error) {
	if req.TemplatePath == "" {
		return nil, errors.New("packer build: no template path")
	}
	path, err := req.ReadPath(req.TemplatePath)
	if err != nil {
		return nil, err
	}
	tpl, err := packer.LoadTemplate(path)
	if err != nil {
		return nil, err
	}
	// Source, not the file: a template may be a directory of files.
	p := &prepared{tpl: tpl, tplData: tpl.Source(), display: req.TemplatePath, values: map[string]string{}, secret: map[string]bool{}, workDir: req.WorkDir}
	for _, f := range req.VarFiles {
		file, err := req.ReadPath(f)
		if err != nil {
			return nil, err
		}
		vf, err := tpl.ReadVarFile(file)
		if err != nil {
			return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
		}
		for k, v := range vf {
			p.values[k] = v
		}
	}
	for k, v := range req.Vars {
		p.values[k] = v
	}
	for _, n := range append(append([]string(nil), req.Sensitive...), tpl.SensitiveVariables...) {
		p.secret[n] = true
	}
	secretEnv := map[string]bool{}
	for _, n := range req.SensitiveEnv {
		secretEnv[n] = true
	}
	p.env = req.Env
	for k := range req.Env {
		if !secretEnv[k] {
			p.envKeys = append(p.envKeys, k)
		}
	}
	sort.Strings(p.envKeys)
	// {{env}} renders from req.Env alone, not from imgflow's environment: a
	// workflow's build must not depend on the machine that plans it.
	p.rendered, err = tpl.RenderBuilds(p.values, req.Env)
	if err != nil {
		var mv *packer.MissingVariablesError
		if errors.As(err, &mv) {
			mv.Template = req.TemplatePath
		}
		return nil, err
	}
	if err := packer.CheckOnly("-only", req.Only, p.rendered.Names); err != nil {
		return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
	}
	p.builds = req.Only
	if len(p.builds) == 0 {
		p.builds = p.rendered.Names
	}
	// packer refuses a missing upload source as it prepares the build.
	var bad []error
	var uploads []packer.Upload
	for _, u := range tpl.Uploads() {
		if !u.AppliesTo(p.builds) {
			continue
		}
		src, err := req.ReadPath(filepath.FromSlash(u.Source))
		if err != nil {
			return nil, err
		}
		if err := u.BadSourceAt(src); err != nil {
			bad = append(bad, fmt.Errorf("provisioner %d (file): %w", u.Provisioner, err))
		}
		uploads = append(uploads, u)
	}
	if err := errors.Join(bad...); err != nil {
		return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
	}
	if p.downloads, err = packer.Downloads(tpl); err != nil {
		return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
	}
	if dir := p.values[packer.FilesDirVar]; dir != "" {
		if p.staged, err = readStaged(dir, sums); err != nil {
			return nil, fmt.Errorf("packer build %s: staged files: %w", req.TemplatePath, err)
		}
	}
	if p.staged, err = addUploads(p.staged, uploads, req, sums); err != nil {
		return nil, fmt.Errorf("packer build %s: uploads: %w", req.TemplatePath, err)
	}
	return p, nil
}

// identity is the deterministic name part of one build's products.
func (p *prepared) identity(build string) uuid.UUID {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("imgflow-localsim/1")
	field(string(p.tplData))
	field(build)
	names := make([]string, 0, len(p.values))
	for k := range p.values {
		if !p.secret[k] && k != packer.FilesDirVar && k != packer.DownloadsDirVar {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		field(k)
		field(p.values[k])
	}
	if p.staged != nil {
		field(string(p.staged.digest))
	} else {
		field("")
	}
	// Only when given, so that the products of builds without env keep
	// their names.
	for _, k := range p.envKeys {
		field("env:" + k)
		field(p.env[k])
	}
	return uuid.NewSHA1(uuid.NameSpaceURL, h.Sum(nil))
}

// NewSimulator returns what makes the Builders of one workspace: they
// share a cache of the staged files' sums, kept in sumsDir for later
// processes too ("": this process only; see packer.OpenSumCache), and write
// temporary files under the tempDir each is made with ("": the system's).
func NewSimulator(sumsDir string) func(p cloud.Provider, tempDir string) *Builder {
	sums := packer.OpenSumCache(sumsDir)
	return func(p cloud.Provider, tempDir string) *Builder {
		b := New(p)
		b.Sums, b.TempDir = sums, tempDir
		return b
	}
}
