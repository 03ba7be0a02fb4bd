package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
)

// validID is what a job id may be: it names a journal prefix (a blob
// name part), a GitHub Actions matrix value and, with - as _, an Azure
// Pipelines matrix entry.
var validID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,99}$`) })

func checkID(id string) error {
	if !validID().MatchString(id) || strings.HasSuffix(id, "-") || strings.Contains(id, "--") {
		return fmt.Errorf("id %q: want lowercase letters, digits and single dashes, starting with a letter, at most 100 characters", id)
	}
	return nil
}

// readableID derives a job's id from its workflow's name and its vars'
// values in var-name order, so writing the vars in another order keeps
// the id: job("workflows/linux.star", os = "Ubuntu", os_version = "22.04",
// features = ["fips"]) is linux-fips-ubuntu-2204. Dots vanish (22.04 is
// 2204), other punctuation becomes a dash.
func readableID(j *Job) string {
	parts := []string{slug(strings.TrimSuffix(path.Base(j.Workflow), ".star"))}
	for _, k := range j.VarNames() {
		if s := slug(j.Vars[k]); s != "" {
			parts = append(parts, s)
		}
	}
	id := strings.Join(parts, "-")
	if len(id) > 90 {
		id = strings.TrimRight(id[:90], "-")
	}
	if id == "" || id[0] < 'a' || id[0] > 'z' {
		id = "job-" + id
	}
	return id
}

// slug lowercases s, drops dots and turns other runs of characters that
// are not letters or digits into one dash.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		case r == '.':
		default:
			dash = true
		}
	}
	return b.String()
}

// canonical identifies what a job runs: its workflow and its vars.
func canonical(j *Job) string {
	var b strings.Builder
	b.WriteString(j.Workflow)
	for _, k := range j.VarNames() {
		fmt.Fprintf(&b, "\x00%s=%s", k, j.Vars[k])
	}
	return b.String()
}

// assignIDs gives each job without an explicit id its readable id. Two
// jobs that run the same workflow with the same vars are refused; two
// different jobs whose readable ids meet (values that differ only in
// punctuation) both get a short hash of what they run appended, which
// depends on nothing else so it stays stable.
func assignIDs(jobs []*Job) error {
	first := map[string]*Job{}
	for _, j := range jobs {
		key := canonical(j)
		if prev, ok := first[key]; ok {
			return fmt.Errorf("%s: job runs %s with the same vars as the job at %s: remove one of them", j.Pos, j.Workflow, prev.Pos)
		}
		first[key] = j
	}
	byID := map[string][]*Job{}
	for _, j := range jobs {
		if j.ID == "" {
			id := readableID(j)
			byID[id] = append(byID[id], j)
		}
	}
	for id, same := range byID {
		for _, j := range same {
			j.ID = id
			if len(same) > 1 {
				sum := sha256.Sum256([]byte(canonical(j)))
				j.ID = id + "-" + hex.EncodeToString(sum[:3])
			}
		}
	}
	seen := map[string]*Job{}
	for _, j := range jobs {
		if prev, ok := seen[j.ID]; ok {
			return fmt.Errorf("%s: job id %s is the id of the job at %s too: give one of them another id = \"…\"", j.Pos, j.ID, prev.Pos)
		}
		seen[j.ID] = j
	}
	return nil
}
