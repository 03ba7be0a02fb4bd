// Package release loads release files: Starlark files that list the jobs
// of a release, each a workflow with its vars, under a stable id.
//
//	job("workflows/linux.star", os = "Ubuntu", os_version = "22.04", features = ["fips"])
//
// A release file is data: its builtins are job(), var() (a --var given to
// the release, or a default) and read_text() (a workspace file, such as a
// checkout's target list), load() is not available, and top-level for
// loops may build the list. Each job's vars
// are kept in their --var form (strings; a list joined with commas), the
// form a CI job passes on the command line, so a local run, a plan and a
// CI job run a workflow with exactly the same vars.
package release

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/internal/suggest"
	"github.com/imgflow/imgflow/interp"
)

// maxSteps bounds the Starlark steps of a release file: it lists jobs,
// so a loop that runs longer is a mistake.
const maxSteps = 1_000_000

// Release is a loaded release file.
type Release struct {
	// Name is the file's base name without .star (aks for
	// releases/aks.star): the journal prefix of its jobs.
	Name string
	// File is the release file, workspace-relative.
	File string
	Jobs []*Job
	// Approval is the environment whose reviewers approve a release
	// before its jobs publish (approval("name") in the file): imgflow ci
	// gates the jobs on it. "" is no approval.
	Approval string
	// ApprovalGate is the workflows' gate() the approval sits at
	// (approval(…, gate = "promote")): imgflow ci runs each job up to it,
	// then continues the job past it once approved. "" gates whole jobs.
	ApprovalGate string
	// Checkouts are the repositories the jobs build from (checkout() in
	// the file): imgflow ci clones each into the workspace before the
	// jobs plan or run.
	Checkouts []Checkout
}

// Checkout is a repository a release's jobs read, cloned into Path.
type Checkout struct {
	// Path is workspace-relative ("third_party/AgentBaker").
	Path string
	// Repository is the GitHub repository, "owner/name".
	Repository string
	// Ref is the branch, tag or commit; "" is the default branch.
	Ref string
}

// Job is one job of a release: one run of a workflow.
type Job struct {
	// ID is stable: derived from the workflow and its sorted vars (or
	// given with id =), readable, unique within the release.
	ID string
	// Workflow is the workflow file, workspace-relative.
	Workflow string
	// Vars are the --var values, by param name.
	Vars map[string]string
	// Pos is the file:line:col of the job() call.
	Pos string
	// Secrets are the names of the secret("name") calls the workflow and
	// the modules it loads make: its CI job needs IMGFLOW_SECRET_<NAME>.
	Secrets []string
	// params are the params the workflow declares.
	params map[string]bool
}

// Job returns the job with the given id.
func (r *Release) Job(id string) (*Job, bool) {
	for _, j := range r.Jobs {
		if j.ID == id {
			return j, true
		}
	}
	return nil, false
}

// Override sets each var, given in its --var form, on every job whose
// workflow declares a param of that name, replacing the job's own value:
// what differs between machines rather than between jobs, such as where
// an image-builder checkout is. Job ids stay those the file gives, so an
// override never moves a job to another journal. A var no job's workflow
// declares is refused.
func (r *Release) Override(vars map[string]string) error {
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := noCredential(vars[name]); err != nil {
			return fmt.Errorf("--var %s: %w", name, err)
		}
		taken := false
		for _, j := range r.Jobs {
			if j.params[name] {
				j.Vars[name] = vars[name]
				taken = true
			}
		}
		if !taken {
			return fmt.Errorf("--var %s: no job of %s runs a workflow with a param %q%s", name, r.File, name, suggest.Hint(name, r.paramNames()))
		}
	}
	return nil
}

// paramNames are the params of the jobs' workflows, sorted.
func (r *Release) paramNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range r.Jobs {
		for p := range j.params {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// VarString is a value's --var form: a string as is, a number or bool
// as written, a list as comma-separated items.
func VarString(v starlark.Value) (string, error) { return varString(v) }

// Secrets are the secrets any job needs, sorted.
func (r *Release) Secrets() []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range r.Jobs {
		for _, s := range j.Secrets {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	return out
}

// VarNames are the job's var names, sorted.
func (j *Job) VarNames() []string {
	names := make([]string, 0, len(j.Vars))
	for k := range j.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// StarlarkVars are the vars as a run takes them.
func (j *Job) StarlarkVars() map[string]starlark.Value {
	out := make(map[string]starlark.Value, len(j.Vars))
	for k, v := range j.Vars {
		out[k] = starlark.String(v)
	}
	return out
}

// Args are the job's command-line arguments after `imgflow run`: the
// workflow, then --var name=value in name order.
func (j *Job) Args() []string {
	args := []string{j.Workflow}
	for _, k := range j.VarNames() {
		args = append(args, "--var", k+"="+j.Vars[k])
	}
	return args
}

// IsRelease reports whether the Starlark source is a release file: it
// calls job() and declares no param(), which every workflow may.
func IsRelease(filename string, src []byte) bool {
	if !bytes.Contains(src, []byte("job")) {
		// No job() call can be written without the word: every plan and
		// run of a workflow asks, and parsing it would cost a millisecond.
		return false
	}
	f, err := interp.FileOptions().Parse(filename, src, 0)
	if err != nil {
		return false
	}
	var jobs, params bool
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			if id, ok := call.Fn.(*syntax.Ident); ok {
				jobs = jobs || id.Name == "job"
				params = params || id.Name == "param"
			}
		}
		return true
	})
	return jobs && !params
}

// IsReleaseFile reads path and reports whether it is a release file.
func IsReleaseFile(path string) bool {
	src, err := os.ReadFile(path)
	return err == nil && IsRelease(path, src)
}

// Load executes the release file (workspace-relative, or //path) and
// returns its jobs. Every job's workflow must exist and declare each of
// its vars; a var must be a string, number, bool or a list of those
// without commas. An error names the job() call's file:line and what to
// change.
func Load(ctx context.Context, ws *builtins.Workspace, file string) (*Release, error) {
	return LoadVars(ctx, ws, file, nil)
}

// LoadVars loads a release file whose var() calls see vars (the --var
// values of the command, in their --var form): a job list may then follow
// a checkout given on the command line. Load is LoadVars without vars.
func LoadVars(ctx context.Context, ws *builtins.Workspace, file string, vars map[string]string) (*Release, error) {
	rel, abs, err := ws.Resolve("", file)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read release %s: %w", rel, err)
	}
	r := &Release{Name: strings.TrimSuffix(path.Base(rel), ".star"), File: rel}
	c := &collector{ws: ws, release: r, workflows: map[string]*workflowInfo{}, vars: vars}
	th := &starlark.Thread{Name: "release " + rel}
	th.SetMaxExecutionSteps(maxSteps)
	stop := context.AfterFunc(ctx, func() { th.Cancel(ctx.Err().Error()) })
	defer stop()
	predeclared := starlark.StringDict{
		"job":       starlark.NewBuiltin("job", c.job),
		"var":       starlark.NewBuiltin("var", c.varValue),
		"read_text": starlark.NewBuiltin("read_text", c.readText),
		"checkout":  starlark.NewBuiltin("checkout", c.checkout),
		"approval":  starlark.NewBuiltin("approval", c.approval),
	}
	if _, err := starlark.ExecFileOptions(interp.FileOptions(), th, rel, src, predeclared); err != nil {
		return nil, interp.RenderError(err, ws)
	}
	if len(r.Jobs) == 0 {
		return nil, fmt.Errorf("%s: the release lists no job: add job(\"workflows/NAME.star\", var = value, …)", rel)
	}
	if err := assignIDs(r.Jobs); err != nil {
		return nil, err
	}
	return r, nil
}

// gateRE is what builtins' gate() accepts as a name.
var gateRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`) })

// collector is job()'s state while a release file executes.
type collector struct {
	ws        *builtins.Workspace
	release   *Release
	workflows map[string]*workflowInfo // by workspace-relative file
	vars      map[string]string
}

// approval implements approval(environment, *, gate = ""): the CI
// environment (GitHub environment with required reviewers, Azure
// Pipelines environment with an approval check) the release's jobs wait
// on, before they start or, with gate, at the workflows' gate(name = gate).
func (c *collector) approval(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var env, gate string
	if len(args) > 1 {
		return nil, fmt.Errorf("approval: gate is a keyword argument: approval(ENVIRONMENT, gate = \"promote\")")
	}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "environment", &env, "gate?", &gate); err != nil {
		return nil, err
	}
	if gate != "" && !gateRE().MatchString(gate) {
		return nil, fmt.Errorf("approval: gate %q: the name of the workflows' gate(name = …), lowercase letters, digits, '-' and '_', e.g. \"promote\"", gate)
	}
	c.release.ApprovalGate = gate
	if !envNameRE().MatchString(env) {
		return nil, fmt.Errorf("approval: environment %q: use letters, digits, '-', '_' and '.', e.g. \"image-promotion-approval\"", env)
	}
	if c.release.Approval != "" {
		return nil, fmt.Errorf("approval: the release already waits on %q: call approval() once", c.release.Approval)
	}
	c.release.Approval = env
	return starlark.None, nil
}

// checkout implements checkout(path, repository, ref = ""): the jobs read
// a clone of a GitHub repository at path ("//third_party/AgentBaker"),
// which imgflow ci makes before the jobs run. Returns path, so that
// `AGENTBAKER = checkout("//third_party/AgentBaker", "Azure/AgentBaker")`
// names it once.
func (c *collector) checkout(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var dir, repo, ref string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &dir, "repository", &repo, "ref?", &ref); err != nil {
		return nil, err
	}
	rel := strings.TrimPrefix(dir, "//")
	if rel == dir || rel == "" || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("checkout: path %q: a directory in the workspace, e.g. \"//third_party/AgentBaker\"", dir)
	}
	if !repoRE().MatchString(repo) {
		return nil, fmt.Errorf("checkout: repository %q: a GitHub repository owner/name, e.g. \"Azure/AgentBaker\"", repo)
	}
	if ref != "" && !refRE().MatchString(ref) {
		return nil, fmt.Errorf("checkout: ref %q: a branch, tag or commit (letters, digits, '.', '_', '-', '/')", ref)
	}
	for _, co := range c.release.Checkouts {
		if co.Path == rel {
			return nil, fmt.Errorf("checkout: %s is already the checkout of %s", dir, co.Repository)
		}
	}
	c.release.Checkouts = append(c.release.Checkouts, Checkout{Path: rel, Repository: repo, Ref: ref})
	return starlark.String(dir), nil
}

var (
	repoRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`) })
	refRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.][A-Za-z0-9_./-]{0,254}$`) })
)

var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$`) })

// varValue implements var(name, default): the --var given to the release
// command, else default.
func (c *collector) varValue(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name, def string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "default", &def); err != nil {
		return nil, err
	}
	if v, ok := c.vars[name]; ok {
		return starlark.String(v), nil
	}
	return starlark.String(def), nil
}

// readText implements read_text(path, default = None): a file inside the
// workspace (//path), or default when it does not exist.
func (c *collector) readText(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var file string
	var def starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &file, "default?", &def); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(file, "//") {
		return nil, fmt.Errorf("read_text: %q: name the file from the workspace root, e.g. \"//third_party/image-builder/images/capi/azure_targets.sh\"", file)
	}
	_, abs, err := c.ws.Resolve("", file)
	if err != nil {
		return nil, fmt.Errorf("read_text: %w", err)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		if os.IsNotExist(err) && def != starlark.None {
			return def, nil
		}
		return nil, fmt.Errorf("read_text: %w", err)
	}
	return starlark.String(data), nil
}

// job implements job(workflow, id = "", **vars).
func (c *collector) job(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("job: want the workflow file as the one positional argument, e.g. job(\"workflows/linux.star\", os = \"Ubuntu\"), got %d", len(args))
	}
	file, ok := starlark.AsString(args[0])
	if !ok {
		return nil, fmt.Errorf("job: the workflow must be a string path, got %s", args[0].Type())
	}
	if !strings.HasPrefix(file, "//") {
		file = "//" + file // workflows are named from the workspace root, as on the command line
	}
	rel, abs, err := c.ws.Resolve("", file)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	info, err := c.workflow(rel, abs)
	if err != nil {
		return nil, fmt.Errorf("job: %w", err)
	}
	j := &Job{Workflow: rel, Vars: map[string]string{}, Pos: th.CallFrame(1).Pos.String(), Secrets: info.secrets, params: info.params}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		if name == "id" {
			id, ok := starlark.AsString(kv[1])
			if !ok {
				return nil, fmt.Errorf("job: id must be a string, got %s", kv[1].Type())
			}
			if err := checkID(id); err != nil {
				return nil, fmt.Errorf("job: %w", err)
			}
			j.ID = id
			continue
		}
		if !info.params[name] {
			return nil, fmt.Errorf("job: %s declares no param %q%s: its params are %s", rel, name, suggest.Hint(name, info.paramNames()), strings.Join(info.paramNames(), ", "))
		}
		v, err := varString(kv[1])
		if err == nil {
			err = noCredential(v)
		}
		if err != nil {
			return nil, fmt.Errorf("job: var %s: %w", name, err)
		}
		j.Vars[name] = v
	}
	c.release.Jobs = append(c.release.Jobs, j)
	return starlark.None, nil
}

// noCredential refuses a var holding a SAS signature or a URL password: a
// job's vars are written into the generated CI files, its id, its journal
// folder and the release's summaries, where no credential may go.
func noCredential(v string) error {
	if redact.HasCredential(v) {
		return fmt.Errorf("holds a credential (a SAS signature or a URL password), which job vars would write into the CI files, job ids, journal folders and summaries: " +
			"have the workflow read it with secret(\"NAME\") (IMGFLOW_SECRET_NAME, a CI secret), or pass the URL without its query")
	}
	return nil
}

// varString is a var's --var form: params convert strings to what they
// declare, and take a list as comma-separated items.
func varString(v starlark.Value) (string, error) {
	switch v := v.(type) {
	case starlark.String:
		return string(v), nil
	case starlark.Int, starlark.Float, starlark.Bool:
		return v.String(), nil
	case *starlark.List, starlark.Tuple:
		var items []string
		iter := starlark.Iterate(v)
		defer iter.Done()
		var x starlark.Value
		for iter.Next(&x) {
			s, err := varString(x)
			if err != nil {
				return "", err
			}
			if strings.Contains(s, ",") {
				return "", fmt.Errorf("list item %q holds a comma, which --var uses between items", s)
			}
			items = append(items, s)
		}
		return strings.Join(items, ","), nil
	}
	return "", fmt.Errorf("want a string, number, bool or list, got %s", v.Type())
}
