package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/builtins"
)

// ciSystem is the CI service imgflow runs in, which decides how logs are
// grouped and how errors and outputs are handed to the pipeline. Outside
// CI every method does nothing, so plain logs stay as they are.
type ciSystem int

const (
	ciNone ciSystem = iota
	// ciAzure is Azure Pipelines (TF_BUILD is set): ##[group] and ##vso[…]
	// logging commands.
	ciAzure
	// ciGitHub is GitHub Actions (GITHUB_ACTIONS=true): ::group:: and
	// ::error …:: workflow commands, outputs through $GITHUB_OUTPUT.
	ciGitHub
)

// detectCI looks at the environment the agents set.
func detectCI() ciSystem {
	switch {
	case os.Getenv("TF_BUILD") != "":
		return ciAzure
	case os.Getenv("GITHUB_ACTIONS") == "true":
		return ciGitHub
	}
	return ciNone
}

func (c ciSystem) String() string {
	switch c {
	case ciAzure:
		return "Azure Pipelines"
	case ciGitHub:
		return "GitHub Actions"
	}
	return "no CI"
}

// groupStart is the prefix that opens a collapsible log group whose title
// is the rest of the line.
func (c ciSystem) groupStart() string {
	switch c {
	case ciAzure:
		return "##[group]"
	case ciGitHub:
		return "::group::"
	}
	return ""
}

// endGroup closes the group opened by groupStart.
func (c ciSystem) endGroup(w io.Writer) {
	switch c {
	case ciAzure:
		fmt.Fprintln(w, "##[endgroup]")
	case ciGitHub:
		fmt.Fprintln(w, "::endgroup::")
	}
}

// posRE splits file:line:col.
var posRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+):(\d+):(\d+)$`) })

// annotateError prints the error as annotations the CI attaches to the
// workflow file and line.
func (c ciSystem) annotateError(w io.Writer, err error) {
	if c == ciNone || err == nil {
		return
	}
	for _, a := range errorReports(err) {
		msg := a.Message
		if a.Backtrace != "" {
			msg += "\n" + a.Backtrace
		}
		switch c {
		case ciAzure:
			props := "type=error"
			if a.File != "" {
				props += fmt.Sprintf(";sourcepath=%s;linenumber=%d;columnnumber=%d", adoProperty(a.File), a.Line, a.Col)
			}
			fmt.Fprintf(w, "##vso[task.logissue %s]%s\n", props, adoData(msg))
		case ciGitHub:
			props := ""
			if a.File != "" {
				props = fmt.Sprintf(" file=%s,line=%d,col=%d", ghProperty(a.File), a.Line, a.Col)
			}
			fmt.Fprintf(w, "::error%s::%s\n", props, ghData(msg))
		}
	}
}

// exportOutputs hands the workflow outputs to the pipeline: Azure
// Pipelines variables of the job's later steps (task.setvariable), GitHub
// step outputs (appended to $GITHUB_OUTPUT). A string is exported as it
// is, any other value as compact JSON.
func (c ciSystem) exportOutputs(w io.Writer, outputs []builtins.Output) error {
	switch c {
	case ciAzure:
		for _, o := range outputs {
			fmt.Fprintf(w, "##vso[task.setvariable variable=%s]%s\n", adoProperty(o.Name), adoData(outputText(o.Value)))
		}
		return nil
	case ciGitHub:
		path := os.Getenv("GITHUB_OUTPUT")
		if path == "" {
			return errors.New("--export-outputs: GITHUB_OUTPUT is not set; GitHub Actions sets it for each step")
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("--export-outputs: %w", err)
		}
		var b strings.Builder
		for _, o := range outputs {
			b.WriteString(githubOutput(o.Name, outputText(o.Value)))
		}
		if _, err := f.WriteString(b.String()); err != nil {
			f.Close()
			return fmt.Errorf("--export-outputs: %w", err)
		}
		return f.Close()
	}
	return errors.New("--export-outputs: not running in Azure Pipelines (TF_BUILD) or GitHub Actions (GITHUB_ACTIONS=true); use --outputs FILE elsewhere")
}

// canExport tells before a run whether --export-outputs can work here.
func (c ciSystem) canExport() error {
	switch c {
	case ciAzure:
		return nil
	case ciGitHub:
		if os.Getenv("GITHUB_OUTPUT") == "" {
			return errors.New("--export-outputs: GITHUB_OUTPUT is not set; GitHub Actions sets it for each step")
		}
		return nil
	}
	return errors.New("--export-outputs: not running in Azure Pipelines (TF_BUILD) or GitHub Actions (GITHUB_ACTIONS=true); use --outputs FILE elsewhere")
}

// outputText is an output value as a pipeline variable holds it.
func outputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return jsonText(v)
}

// githubOutput is one NAME=value entry of $GITHUB_OUTPUT; a multi-line
// value uses the NAME<<DELIMITER form with a delimiter not in the value.
func githubOutput(name, value string) string {
	if !strings.ContainsAny(value, "\r\n") {
		return name + "=" + value + "\n"
	}
	delim := "IMGFLOW_EOF"
	for strings.Contains(value, delim) {
		delim += "_"
	}
	return name + "<<" + delim + "\n" + value + "\n" + delim + "\n"
}

// GitHub workflow commands: the message escapes %, CR and LF; property
// values also ':' and ','.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// Azure Pipelines logging commands: a line break in the message is
// %0D%0A (the agent unescapes %0D and %0A); property values also escape
// ';' and ']'.
func adoData(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.NewReplacer("\r", "%0D", "\n", "%0D%0A").Replace(s)
}

func adoProperty(s string) string {
	return strings.NewReplacer(";", "%3B", "]", "%5D").Replace(adoData(s))
}
