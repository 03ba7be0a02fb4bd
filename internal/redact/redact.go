// Package redact removes secrets from text that leaves imgflow: error
// messages, step lines, plans, journals, state, outputs, CI files, JUnit
// reports, artifacts. It is imgflow's one redaction policy and knows
// three kinds of secret: Azure SAS signatures (a query carrying sig=),
// passwords in a URL's userinfo (https://user:PASSWORD@host/…), and the
// values of secret()s, which the process holds in IMGFLOW_SECRET_*
// variables.
package redact

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// SecretEnvPrefix starts the environment variables that hold secret()
// values (builtins.SecretEnvPrefix is the same string).
const SecretEnvPrefix = "IMGFLOW_SECRET_"

// ownEnvPrefix starts every variable imgflow reads for itself: secret()
// values, the Azure target's storage key, the cache and profile settings.
const ownEnvPrefix = "IMGFLOW_"

// ChildEnv is environ (KEY=VALUE entries) without imgflow's own
// variables: a child process (packer, a command() step) gets one only
// when the workflow passes it. None is the child's business, the storage
// key and the secrets least of all, and a profile or cache setting in
// packer's environment would change packer validate's cache key.
func ChildEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, ownEnvPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// MinSecretLen is the shortest secret() value imgflow accepts (see
// CheckSecretEnv) and replaces: a shorter one ("x", "yes") would blank
// out ordinary words of every output.
const MinSecretLen = 4

var (
	// A URL query carrying a signature: the whole query goes.
	sasQuery = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\?([^\s"'<>]*?&)?sig(=|%3D)[^\s"'<>]*`) })
	// A signature parameter anywhere else (also URL-encoded).
	sasParam = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(^|[?&\s"';]|%26|%3F)sig(=|%3D)[^&\s"'<>]*`) })
	// A URL with a query, in a text.
	urlWithQuery = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^\s"'<>?]*)\?[^\s"'<>]+`)
	})
	// The password of a URL's userinfo: scheme://user:PASSWORD@host.
	userinfoPassword = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://[^/\s:@"'<>]*):[^/\s@"'<>]*@`)
	})
)

// SAS removes SAS signatures from s, a text that may quote URLs (an
// error message, a log or packer output line): a URL query holding sig=
// becomes ?<redacted>, a lone sig=… parameter (a header, a connection
// string's SharedAccessSignature=…) sig=<redacted>. It is imgflow's one
// SAS redaction: the Azure target's errors and logs, packer's output and
// artifacts, step records and journals all go through it.
//
// It also removes the password of every URL's userinfo (UserinfoPassword):
// whatever redacts SAS signatures redacts those too.
func SAS(s string) string {
	return signatures(UserinfoPassword(s))
}

// signatures is SAS but for URL passwords.
func signatures(s string) string {
	// Both patterns need sig= (or its URL-encoded sig%3D): most texts
	// have neither, and skip compiling and running the regexps.
	if !containsFold(s, "sig=") && !containsFold(s, "sig%3d") {
		return s
	}
	s = sasQuery().ReplaceAllString(s, "?<redacted>")
	return sasParam().ReplaceAllString(s, "${1}sig=<redacted>")
}

// containsFold is strings.Contains ignoring ASCII case, without the copy
// strings.ToLower makes of a text with capitals (every step's arguments
// and summary come through SAS). sub is lower case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// UserinfoPassword replaces the password of every URL in s that carries
// one (https://user:PASSWORD@host/…) with <redacted>, keeping the user.
func UserinfoPassword(s string) string {
	// The pattern needs both: a plan passes megabytes of scripts (a
	// VHD's content test) with "$@" in them through here.
	if !strings.Contains(s, "@") || !strings.Contains(s, "://") {
		return s
	}
	return userinfoPassword().ReplaceAllString(s, "${1}:<redacted>@")
}

// HasCredential reports whether s carries a SAS signature or a URL
// password: a value that must not become part of a name, an id or a
// generated file.
func HasCredential(s string) bool { return SAS(s) != s }

// URL returns u, a value known to be a URL (a blob or copy source URL,
// a journal location), without its query: any query may carry a
// credential (an Azure SAS, or another service's signed URL), so none is
// printed. A password in its userinfo is redacted too.
func URL(u string) string {
	base, _, ok := strings.Cut(UserinfoPassword(u), "?")
	if !ok {
		return u
	}
	return base + "?<redacted>"
}

// URLQueries is URL for every URL in s, a text that may quote several
// among other words.
func URLQueries(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "?") {
		return UserinfoPassword(s)
	}
	return UserinfoPassword(urlWithQuery().ReplaceAllString(s, "${1}?<redacted>"))
}

// Strict is URLQueries and SAS in one pass over URL passwords: every URL
// in s loses its query, and the text its SAS signatures and URL
// passwords. It is what a step's recorded arguments go through.
func Strict(s string) string {
	return signatures(URLQueries(s))
}

// Values replaces every occurrence of each value in s with <secret>,
// longest first so a value containing another is replaced whole.
func Values(s string, values []string) string {
	sorted := append([]string(nil), values...)
	sort.Slice(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, v := range sorted {
		if len(v) >= MinSecretLen {
			s = strings.ReplaceAll(s, v, "<secret>")
		}
	}
	return s
}

// CheckSecretEnv refuses secret() values too short to redact: each
// IMGFLOW_SECRET_* variable of environ (KEY=VALUE entries) that holds a
// value shorter than MinSecretLen, named with what to do. An empty value
// is an unset secret, which secret() reports where it is read.
func CheckSecretEnv(environ []string) error {
	var errs []error
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, SecretEnvPrefix) && v != "" && len(v) < MinSecretLen {
			errs = append(errs, fmt.Errorf("%s holds fewer than %d characters: a secret that short cannot be hidden (it would blank those characters out of every output); set the real secret, or unset %s",
				k, MinSecretLen, k))
		}
	}
	return errors.Join(errs...)
}

// SecretValues returns the secret() values held in environ (KEY=VALUE
// entries, as os.Environ returns them).
func SecretValues(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(k, SecretEnvPrefix) && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Text removes SAS signatures and the given secret values from s.
func Text(s string, secrets []string) string {
	return SAS(Values(s, secrets))
}

// Error returns err, or when its message holds a SAS, an error printing
// it without the SAS that keeps err's chain (errors.Is, errors.As, Azure
// error codes). A *url.Error in the chain (Go's HTTP client quotes the
// whole request URL) loses the URL's query too.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = URL(ue.URL)
	}
	msg := err.Error()
	if r := SAS(msg); r != msg {
		return &redactedError{err: err, msg: r}
	}
	return err
}

// redactedError prints an error without its SAS and unwraps to it.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
