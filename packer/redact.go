package packer

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/imgflow/imgflow/internal/redact"
)

// secretMask is what packer itself prints for sensitive-variables in its
// human UI.
const secretMask = "<sensitive>"

// redactor masks secret values and SAS signatures in text that is printed
// or returned.
type redactor struct {
	secrets []string // longest first, so a secret containing another wins
}

func newRedactor(secrets []string) *redactor {
	seen := map[string]bool{}
	var list []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			list = append(list, s)
		}
	}
	for _, s := range secrets {
		add(s)
		// packer or a provisioner may print the value JSON-escaped, or one
		// line at a time when it spans several.
		if b, err := json.Marshal(s); err == nil {
			add(strings.Trim(string(b), `"`))
		}
		if strings.ContainsAny(s, "\r\n") {
			for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
				if len(strings.TrimSpace(line)) >= 4 { // short fragments would mask unrelated text
					add(line)
				}
			}
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return len(list[i]) > len(list[j]) })
	return &redactor{secrets: list}
}

// redact returns s with every secret replaced by <sensitive> and every SAS
// removed (redact.SAS: the azure-arm artifact prints read-only SAS URLs
// of the captured VHD).
func (r *redactor) redact(s string) string {
	if r != nil {
		for _, sec := range r.secrets {
			s = strings.ReplaceAll(s, sec, secretMask)
		}
	}
	return redact.SAS(s)
}

func (r *redactor) redactAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = r.redact(s)
	}
	return out
}
