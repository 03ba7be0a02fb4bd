package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/suggest"
)

// commandFlags is a command's FlagSet: -h prints the command's help on
// stdout, a bad flag its error and where to find help on stderr.
type commandFlags struct {
	*flag.FlagSet
	name string
	e    *env
}

func newFlagSet(name string, e *env) *commandFlags {
	fs := flag.NewFlagSet("imgflow "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {} // parseFlags prints the help, or where to find it
	f := &commandFlags{FlagSet: fs, name: name, e: e}
	if e.declared != nil {
		e.declared(fs)
	}
	return f
}

// parseFlags parses flags that may come before or after the positional
// arguments (imgflow run FILE --var k=v), returning the positionals.
func parseFlags(fs *commandFlags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				writeCommandHelp(fs.e.stdout, lookupCommand(fs.name), fs.FlagSet)
			} else {
				fmt.Fprintf(fs.Output(), "%sRun 'imgflow %s -h' for its flags.\n", fs.flagHint(err), fs.name)
			}
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagHint is "did you mean --NAME? " when err is an unknown flag close
// to one the command takes, else "".
func (fs *commandFlags) flagHint(err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c, ok := suggest.Closest(strings.TrimLeft(name, "-"), names); ok {
		return "Did you mean --" + c + "? "
	}
	return ""
}

// flagError ends a command whose flags did not parse (parseFlags printed
// why): -h is a success, anything else a usage error.
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return exitCode(2)
}

// sharedFlags are the flags several commands take. Each is declared here
// once, with one meaning and one help sentence; a command adds those it
// takes.
type sharedFlags struct {
	root     string
	target   targetFlags
	journal  string
	output   string
	json     bool
	vars     varsFlag
	varsFile string
}

// addRoot declares --root.
func (s *sharedFlags) addRoot(fs *commandFlags) {
	fs.StringVar(&s.root, "root", ".", "workspace root `dir`: load() paths and file reads stay inside it, and positions are relative to it")
}

// addState declares --state.
func (s *sharedFlags) addState(fs *commandFlags) {
	fs.StringVar(&s.target.stateDir, "state", "", "state `dir` (default ROOT/.imgflow): the local target's resources, and the run journals in its runs/ on every target")
}

// addTarget declares --target and the flags that reach the Azure target
// (--subscription, --storage-auth, --credential, --cloud).
func (s *sharedFlags) addTarget(fs *commandFlags) {
	fs.StringVar(&s.target.name, "target", "local", "the `target` where the resources are: local (simulated, under --state) or azure")
	fs.StringVar(&s.target.subscription, "subscription", "", "Azure subscription `id` (default $AZURE_SUBSCRIPTION_ID)")
	fs.StringVar(&s.target.storageAuth, "storage-auth", os.Getenv(envStorageAuth),
		"how blob calls authenticate on the Azure target, a `mode`: aad (a blob data role), key (the account key from ListKeys) or auto: aad, else the key (default auto; $"+envStorageAuth+")")
	fs.StringVar(&s.target.cloud, "cloud", os.Getenv(envCloud),
		"the Azure `cloud` of the Azure target: AzurePublic, AzureUSGovernment or AzureChina (also public, usgov, china, AzureUSGovernmentCloud, …): its ARM endpoint, token audience, sign-in authority and storage suffix (default AzurePublic; $"+envCloud+")")
	fs.StringVar(&s.target.credential, "credential", os.Getenv(envCredential),
		"the Azure target's `credential`: github-oidc or azure-pipelines (a CI job's federated token, fetched anew whenever a token expires), workload-identity, managed-identity, cli, default (DefaultAzureCredential) or auto: the CI job's federated credential when its variables are set, else default (default auto; $"+envCredential+")")
}

// addJournal declares --journal.
func (s *sharedFlags) addJournal(fs *commandFlags) {
	fs.StringVar(&s.journal, "journal", "", "where the run journals are: a directory, or an Azure blob container `URL` (https://ACCOUNT.blob.core.windows.net/CONTAINER, or a FOLDER/… in it; each run the append blob RUN_ID.jsonl) that agents share to --resume each other's runs (default STATE/runs)")
}

// addOutput declares --output; jsonAlias also declares the deprecated
// --json of the commands that had it.
func (s *sharedFlags) addOutput(fs *commandFlags, jsonAlias bool) {
	fs.StringVar(&s.output, "output", "text", "the output `format`: text, or json for one JSON document on stdout (docs/output-schemas.md)")
	if jsonAlias {
		fs.BoolVar(&s.json, "json", false, "deprecated: the same as --output json")
	}
}

// addVars declares --var and --vars-file.
func (s *sharedFlags) addVars(fs *commandFlags) {
	s.vars = varsFlag{}
	fs.Var(s.vars, "var", "set a workflow param to a string: `name=value` (repeatable; wins over --vars-file)")
	fs.StringVar(&s.varsFile, "vars-file", "", "JSON `file` of param values: an object of name to value, typed (numbers, lists, …)")
}

// jsonOutput checks --output and reports whether it asks for JSON. The
// deprecated --json still works, with a warning.
func (s *sharedFlags) jsonOutput(e *env) (bool, error) {
	if err := checkOutputFlag(s.output); err != nil {
		return false, err
	}
	if s.json {
		e.warnf("--json is deprecated: use --output json")
	}
	return s.json || s.output == "json", nil
}

// loadVars are the workflow's vars from --vars-file and --var.
func (s *sharedFlags) loadVars() (map[string]starlark.Value, error) {
	return loadVars(s.varsFile, s.vars)
}

// varsFlag collects repeated --var name=value.
type varsFlag map[string]string

func (v varsFlag) String() string { return "" }

func (v varsFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	if _, dup := v[name]; dup {
		return fmt.Errorf("--var %s given twice", name)
	}
	v[name] = value
	return nil
}

// loadVars merges a JSON vars file (typed values) with --var strings; a
// --var wins over the file.
func loadVars(file string, vars varsFlag) (map[string]starlark.Value, error) {
	out := map[string]starlark.Value{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("vars file: %w", err)
		}
		defer f.Close()
		var m map[string]any
		dec := json.NewDecoder(io.LimitReader(f, 16<<20))
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("vars file %s: want a JSON object of param values: %w", file, err)
		}
		for k, v := range m {
			out[k] = builtins.FromGo(v)
		}
	}
	for k, v := range vars {
		out[k] = starlark.String(v)
	}
	return out, nil
}
