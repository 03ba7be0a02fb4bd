package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// writeCommandHelp prints what imgflow CMD -h shows: the command line,
// the description, an example and every flag with its sentence.
func writeCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	var b strings.Builder
	if c == nil { // a FlagSet of no listed command: its flags only
		fmt.Fprintf(&b, "Usage of %s:\n", fs.Name())
	} else {
		fmt.Fprintf(&b, "Usage:\n  %s\n\n", strings.TrimSpace("imgflow "+c.name+" "+c.usage))
		b.WriteString(wrap(c.description, "", 78))
		fmt.Fprintf(&b, "\nExample:\n  %s\n", c.example)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n == 0 {
			b.WriteString("\nFlags:\n")
		}
		n++
		arg, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  %s", dashed(f.Name))
		if arg != "" {
			b.WriteString(" " + arg)
		}
		b.WriteString("\n")
		if showDefault(f) {
			usage += " (default " + defaultText(f) + ")"
		}
		b.WriteString(wrap(usage, "      ", 78))
	})
	fmt.Fprint(w, b.String())
}

// showDefault is whether a flag's help names its default: not when it is
// the zero value, nor when the sentence already says it.
func showDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "text":
		return false
	}
	return !strings.Contains(f.Usage, "(default")
}

// wrap fills text into lines of at most width columns, each starting with
// indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	if len(line) > len(indent) {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// defaultText is a flag's default as the flag package shows it: strings
// quoted, other values as they are.
func defaultText(f *flag.Flag) string {
	if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}
