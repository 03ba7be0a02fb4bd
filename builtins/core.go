package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/internal/gitrev"
	"github.com/imgflow/imgflow/internal/suggest"
	"github.com/imgflow/imgflow/journal"
)

func registerCore(r *Registry) {
	r.add("Parameters and run facts",
		&Spec{
			Name: "param", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "the parameter's name, set with `--var name=value`"},
				{Name: "default", Kind: KindAny, Default: "None", Doc: "value when not set; without a default the parameter is required. A `--var` string is converted to the default's type (int, bool, list: comma-separated)"},
				{Name: "doc", Kind: KindString, Default: `""`, Doc: "what the parameter is for (shown in errors)"},
				{Name: "choices", Kind: KindStringList, Default: "None", Doc: "the allowed values; for a list param, those of each element"},
			},
			Returns: "the value",
			Doc:     "Declares a workflow input. Unknown `--var`s and missing required params are errors that list the declared params.",
			Example: `channel = param("channel", default = "stable", choices = ["stable", "beta", "alpha", "lts"])`,
			Impl:    paramImpl,
		},
		&Spec{
			Name: "run_info", Effect: Pure,
			Returns: "struct(id, time, timestamp, imgflow_version, workflow, workflow_commit)",
			Doc: "Facts fixed for the run: its id, its start time (RFC 3339, UTC) and Unix timestamp, imgflow's version, the workflow file and the workspace's git commit (\"\" outside a git checkout). " +
				"Names minted from them are the same on every pass and on resume; workflows have no other clock. Every resource imgflow creates is tagged with the run id, version, workflow and commit.",
			Example: `version = "1.%d.0" % run_info().timestamp`,
			Impl: func(c *Call) (starlark.Value, error) {
				i := c.Run.Info
				t := i.Time.UTC()
				return makeStruct("run_info", fields{
					"id": i.ID, "time": t.Format("2006-01-02T15:04:05Z"), "timestamp": t.Unix(),
					"imgflow_version": i.Version, "workflow": i.Workflow, "workflow_commit": i.WorkflowCommit,
				}), nil
			},
		},
		&Spec{
			Name: "git_commit", Positional: 1, Effect: Reads,
			Params: []Param{
				{Name: "path", Kind: KindString, Doc: "a git checkout's directory: relative to the calling file, or `//path` from the workspace root"},
				{Name: "default", Kind: KindString, Default: "None", Doc: "returned when path is not a git checkout; without it that is an error"},
			},
			Returns: "the 40-hex commit the checkout has checked out",
			Doc: "The commit of a template source's checkout (image-builder, AgentBaker), read from its .git (worktrees and packed refs included), " +
				"for the provenance tags of what it builds. Uncommitted changes are not seen.",
			Example: `tags = {"IB_COMMIT": git_commit("//third_party/image-builder")}`,
			Impl:    gitCommitImpl,
		},
		&Spec{
			Name: "output", Positional: 2, Effect: Pure,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "output name"},
				{Name: "value", Kind: KindAny, Doc: "a JSON-like value (string, number, bool, list, dict, struct)"},
			},
			Returns: "None",
			Doc:     "Sets a workflow output: printed at the end and written as JSON with `--outputs FILE`.",
			Example: `output("vhd_url", vhd.url)`,
			Impl:    outputImpl,
		},
		&Spec{
			Name: "cleanup", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "fn", Kind: KindCallable, Doc: "a function of no arguments"},
				{Name: "deletes", Kind: KindOneOf(KindStruct("managed_image", "image_version", "image_definition", "blob"), KindString), Default: "None",
					Doc: "the temporary resource `fn` deletes: journaled, so `imgflow gc` deletes it if the run dies before its cleanups"},
			},
			Returns: "None",
			Doc: "Registers `fn` to run when the workflow ends, newest first, on success, failure and cancel. A failing cleanup " +
				"fails the run. A resumed run runs the cleanups its earlier attempts did not; `imgflow gc` can finish only " +
				"those that name what they delete (`deletes`), as lib/temporary.star's do. A run cancelled by a signal keeps " +
				"what those delete (a later step may use it): its resume deletes it when it ends, or `imgflow gc`.",
			Example: `cleanup(lambda: delete(build.managed_image), deletes = build.managed_image)`,
			Impl:    cleanupImpl,
		},
		&Spec{
			Name: "read_json", Positional: 1, Effect: Reads,
			Params:  []Param{{Name: "path", Kind: KindString, Doc: "relative to the calling file, or `//path` from the workspace root"}},
			Returns: "the decoded value",
			Doc:     "Reads a JSON file inside the workspace.",
			Example: `manifest = read_json("//artifacts/cse/manifest.json")`,
			Impl: func(c *Call) (starlark.Value, error) {
				data, rel, err := c.readFile()
				if err != nil {
					return nil, err
				}
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					return nil, fmt.Errorf("read_json %s: %w", rel, err)
				}
				return FromGo(v), nil
			},
		},
		&Spec{
			Name: "read_text", Positional: 1, Effect: Reads,
			Params: []Param{
				{Name: "path", Kind: KindString, Doc: "relative to the calling file, or `//path` from the workspace root"},
				{Name: "default", Kind: KindAny, Default: "None", Doc: "returned when the file does not exist (e.g. `\"\"`), so a workflow can say how to get it, such as a checkout; without it a missing file is an error"},
			},
			Returns: "string, or `default` when the file does not exist and `default` is given",
			Doc:     "Reads a text file inside the workspace.",
			Example: `rule = read_text("//artifacts/tmpfiles/mglru.conf")`,
			Impl: func(c *Call) (starlark.Value, error) {
				data, _, err := c.readFile()
				if errors.Is(err, fs.ErrNotExist) && c.Has("default") {
					return c.Value("default"), nil
				}
				if err != nil {
					return nil, err
				}
				return starlark.String(data), nil
			},
		},
	)
}

var paramNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })

func paramImpl(c *Call) (starlark.Value, error) {
	name := c.String("name", "")
	if !paramNameRE().MatchString(name) {
		return nil, fmt.Errorf("param: invalid name %q: use lowercase letters, digits and '_', starting with a letter (e.g. %q)", name, "flatcar_version")
	}
	if m := loadingModule(c.Thread); m != "" {
		return nil, fmt.Errorf("param %q: params are declared by the workflow, not while loading %s", name, m)
	}
	decl := ParamDecl{Name: name, Default: c.Value("default"), Doc: c.String("doc", ""), Choices: c.Strings("choices"), Pos: c.Pos()}
	if err := c.Run.declareParam(decl); err != nil {
		return nil, err
	}
	v, given := c.Run.Vars[name]
	switch {
	case given && decl.Default != nil:
		conv, err := convertVar(v, decl.Default)
		if err != nil {
			return nil, fmt.Errorf("param %q: %v", name, err)
		}
		v = conv
	case !given && decl.Default == nil:
		return nil, c.missingParam(decl)
	case !given:
		v = decl.Default
	}
	if len(decl.Choices) > 0 {
		if err := checkChoices(decl, v); err != nil {
			return nil, err
		}
	}
	v.Freeze()
	return v, nil
}

// checkChoices refuses a value that is not one of the param's choices;
// a list param's choices are those of each element (features = ["fips"]).
func checkChoices(decl ParamDecl, v starlark.Value) error {
	elems := []starlark.Value{v}
	list, isList := v.(*starlark.List)
	if isList {
		elems = elems[:0]
		for i := 0; i < list.Len(); i++ {
			elems = append(elems, list.Index(i))
		}
	}
	for _, el := range elems {
		s, _ := starlark.AsString(el)
		if contains(decl.Choices, s) {
			continue
		}
		want := "pass --var " + decl.Name + "=<one of them>"
		if isList {
			want = "pass --var " + decl.Name + "=<any of them, comma-separated>"
		}
		if close, ok := suggest.Closest(s, decl.Choices); ok {
			// Choices are exact (an image's OS name is "Ubuntu"): say
			// which one was meant rather than guess.
			want = "did you mean " + close + "?"
			if !isList {
				want = "did you mean --var " + decl.Name + "=" + close + "?"
			}
		}
		return fmt.Errorf("param %q: %s is not one of the choices %s: %s", decl.Name, el, strings.Join(decl.Choices, ", "), want)
	}
	return nil
}

func (c *Call) missingParam(decl ParamDecl) error {
	msg := fmt.Sprintf("param %q is required: pass --var %s=<value>", decl.Name, decl.Name)
	if decl.Doc != "" {
		msg += " (" + decl.Doc + ")"
	}
	if len(decl.Choices) > 0 {
		msg += "; choices: " + strings.Join(decl.Choices, ", ")
	}
	declared := c.Run.Params()
	text := DescribeParams(declared)
	known := map[string]bool{}
	for _, p := range declared {
		known[p.Name] = true
	}
	for _, h := range c.Run.ParamHints {
		if !known[h] {
			text += "\n  " + h + " (declared further down)"
			known[h] = true
		}
	}
	return fmt.Errorf("%s\n%s", msg, text)
}

// DescribeParams lists declared params for error messages.
func DescribeParams(params []ParamDecl) string {
	var b strings.Builder
	b.WriteString("declared params:")
	for _, p := range params {
		fmt.Fprintf(&b, "\n  %s", p.Name)
		if p.Default == nil {
			b.WriteString(" (required)")
		} else {
			fmt.Fprintf(&b, " (default %s)", p.Default)
		}
		if p.Doc != "" {
			b.WriteString(": " + p.Doc)
		}
	}
	return b.String()
}

// convertVar converts a --var string to the type of the default.
func convertVar(v, def starlark.Value) (starlark.Value, error) {
	s, isStr := v.(starlark.String)
	if !isStr {
		// A typed value from a vars file must have the default's type.
		if !sameType(v, def) {
			return nil, fmt.Errorf("value %s is a %s, but the default %s is a %s", v, v.Type(), def, def.Type())
		}
		return v, nil
	}
	switch def.(type) {
	case starlark.Int:
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("value %q is not an integer (the default %s is)", string(s), def)
		}
		return starlark.MakeInt64(n), nil
	case starlark.Bool:
		b, err := strconv.ParseBool(string(s))
		if err != nil {
			return nil, fmt.Errorf("value %q is not a bool (true or false; the default %s is)", string(s), def)
		}
		return starlark.Bool(b), nil
	case *starlark.List, starlark.Tuple:
		var items []starlark.Value
		for _, part := range strings.Split(string(s), ",") {
			if part = strings.TrimSpace(part); part != "" {
				items = append(items, starlark.String(part))
			}
		}
		return starlark.NewList(items), nil
	}
	return v, nil
}

// sameType compares Starlark types, lists and tuples alike.
func sameType(a, b starlark.Value) bool {
	seq := func(v starlark.Value) bool {
		switch v.(type) {
		case *starlark.List, starlark.Tuple:
			return true
		}
		return false
	}
	return a.Type() == b.Type() || (seq(a) && seq(b))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func outputImpl(c *Call) (starlark.Value, error) {
	name := c.String("name", "")
	if !paramNameRE().MatchString(name) {
		return nil, fmt.Errorf("output: invalid name %q: use lowercase letters, digits and '_'", name)
	}
	if containsSecret(c.Value("value")) {
		return nil, fmt.Errorf("output %q: outputs are printed and written to files; a secret() cannot be one", name)
	}
	v, err := ToGo(c.Value("value"))
	if err != nil {
		return nil, fmt.Errorf("output %q: %v", name, err)
	}
	// Outputs are printed, written to --outputs and the CI's variables:
	// a SAS or URL password in one is redacted, as everywhere else.
	return starlark.None, c.Run.setOutput(Output{Name: name, Value: RedactSecrets(v), Pos: c.Pos()})
}

func cleanupImpl(c *Call) (starlark.Value, error) {
	fn := c.Value("fn").(starlark.Callable)
	// Registered again when a resumed run passes this line; the id (the
	// parallel() branch, the position and how often that branch registered
	// there) lets it run once, whatever order branches run in.
	id := c.Run.starlarkCleanupID(branchPath(c.Thread) + c.Pos())
	kept := ""
	if res := c.Value("deletes"); res != nil && res != starlark.None {
		kind, args, what, err := deletionOf(res)
		if err != nil {
			return nil, fmt.Errorf("cleanup: deletes: %w", err)
		}
		if c.Run.Journal != nil {
			kept = what
			spec := journal.Cleanup{ID: id, Kind: kind, Name: "delete " + what, Pos: c.Pos(), Args: c.Run.withSubscription(args, what)}
			if err := c.Run.Journal.RecordCleanup(spec); err != nil {
				return nil, fmt.Errorf("cleanup: %w", err)
			}
		}
	}
	c.Run.PushCleanup(Cleanup{
		ID:                  id,
		Name:                fn.Name(),
		Pos:                 c.Pos(),
		KeepWhenInterrupted: kept,
		Fn: func(_ context.Context, thread *starlark.Thread) error {
			_, err := starlark.Call(thread, fn, nil, nil)
			return err
		},
	})
	return starlark.None, nil
}

// readFile reads the path argument, resolved against the calling file.
func (c *Call) readFile() ([]byte, string, error) {
	from := ""
	if len(c.step.Stack) >= 2 {
		from = c.step.Stack[len(c.step.Stack)-2].Pos.Filename()
	}
	rel, abs, err := c.Run.Workspace.Resolve(from, c.String("path", ""))
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", c.Spec.Name, err)
	}
	data, err := readRegularFile(abs, MaxReadSize)
	if err != nil {
		return nil, rel, fmt.Errorf("%s %s: %w", c.Spec.Name, rel, err)
	}
	return data, rel, nil
}

// containsSecret reports whether v is or holds a secret().
func containsSecret(v starlark.Value) bool {
	switch v := v.(type) {
	case *Secret:
		return true
	case starlark.Indexable:
		if _, isStr := v.(starlark.String); isStr {
			return false
		}
		for i := 0; i < v.Len(); i++ {
			if containsSecret(v.Index(i)) {
				return true
			}
		}
	case *starlark.Dict:
		for _, kv := range v.Items() {
			if containsSecret(kv[1]) {
				return true
			}
		}
	case *starlarkstruct.Struct:
		for _, n := range v.AttrNames() {
			if f, err := v.Attr(n); err == nil && containsSecret(f) {
				return true
			}
		}
	}
	return false
}

func gitCommitImpl(c *Call) (starlark.Value, error) {
	path := c.String("path", "")
	from := ""
	if len(c.step.Stack) >= 2 {
		from = c.step.Stack[len(c.step.Stack)-2].Pos.Filename()
	}
	_, abs, err := c.Run.Workspace.Resolve(from, path)
	if err != nil {
		return nil, fmt.Errorf("git_commit: %w", err)
	}
	commit, err := gitrev.Commit(abs)
	if err != nil {
		if c.Has("default") {
			return starlark.String(c.String("default", "")), nil
		}
		return nil, fmt.Errorf("git_commit: %w: pass default = \"\" to go without, or check out %s with git", err, path)
	}
	return starlark.String(commit), nil
}
