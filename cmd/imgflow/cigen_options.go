package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
)

// The values `imgflow ci` writes into the generated files' shell lines
// and YAML. Each is checked against what its consumer takes, so a typo or
// a shell word ("v1; touch pwned") fails here rather than in every job.
var (
	// A version `go install pkg@VERSION` takes: latest, a semantic
	// version (pseudo-versions included), a commit hash or a branch or
	// tag name; none starts with '-' or holds a shell character.
	goModuleQuery = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(latest|v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?|[0-9a-f]{7,40}|[A-Za-z0-9][A-Za-z0-9._/-]{0,99})$`)
	})
	// Go's version as actions/setup-go and GoTool take it: 1.26, 1.26.8, 1.27rc1.
	goToolVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+|rc[0-9]+|beta[0-9]+)?$`) })
	// A packer release, as its download URL spells it: 1.9.5.
	packerVersion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`) })
)

// ciTargets are the targets a generated job may plan and run on.
var ciTargets = []string{"azure", "local"}

// validate checks every option before anything is generated.
func (o ciOptions) validate() error {
	var errs []error
	if !contains(ciTargets, o.target) {
		errs = append(errs, fmt.Errorf("--run-target %q: want %s", o.target, strings.Join(ciTargets, " or ")))
	}
	if o.maxParallel < 0 {
		errs = append(errs, fmt.Errorf("--max-parallel %d: want 0 (as many as the engine gives) or more", o.maxParallel))
	}
	if !goModuleQuery().MatchString(o.imgflowVersion) || strings.Contains(o.imgflowVersion, "..") {
		errs = append(errs, fmt.Errorf("--imgflow-version %q: want a version go install takes: latest, a tag such as v1.4.0, or a commit hash", o.imgflowVersion))
	}
	if !goToolVersion().MatchString(o.goVersion) {
		errs = append(errs, fmt.Errorf("--go-version %q: want a Go release such as 1.26.8", o.goVersion))
	}
	if !packerVersion().MatchString(o.packerVersion) {
		errs = append(errs, fmt.Errorf("--packer-version %q: want a packer release such as 1.9.5", o.packerVersion))
	}
	if strings.TrimSpace(o.serviceConnection) == "" || strings.ContainsAny(o.serviceConnection, "\n\r$") {
		errs = append(errs, fmt.Errorf("--service-connection %q: want the service connection's name", o.serviceConnection))
	}
	return errors.Join(errs...)
}

// notARelease explains why file is not a release `what` can take: it
// does not exist, or it does not call job().
func notARelease(file, what string) error {
	if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: release file %s does not exist", what, file)
	}
	return fmt.Errorf("%s: %s is not a release file (one that calls job()), e.g. releases/aks.star", what, file)
}
