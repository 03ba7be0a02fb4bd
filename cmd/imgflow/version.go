package main

import (
	"runtime/debug"
	"strings"
)

// imgflowVersion is the version this binary reports: the one set with
// -ldflags "-X main.version=…", else the module version `go install
// …@VERSION` recorded, else a Go pseudo-version made of the commit the
// tree was built from (go build stamps it), "+dirty" when the tree had
// changes; "dev" only when none of those is known.
func imgflowVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	return versionOf(info)
}

// versionOf derives the version from build info.
func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev, when := settings["vcs.revision"], settings["vcs.time"]
	if len(rev) < 12 || len(when) < len("2006-01-02T15:04:05") {
		return "dev"
	}
	stamp := strings.NewReplacer("-", "", "T", "", ":", "").Replace(when[:len("2006-01-02T15:04:05")])
	v := "v0.0.0-" + stamp + "-" + rev[:12]
	if settings["vcs.modified"] == "true" {
		v += "+dirty"
	}
	return v
}

// installable is the version `go install …@VERSION` accepts for a
// binary of version v ("+dirty" dropped: the commit it names), or "" when
// v is none.
func installable(v string) string {
	v, _, _ = strings.Cut(v, "+")
	if v == "dev" {
		return ""
	}
	return v
}
