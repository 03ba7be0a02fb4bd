package builtins

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The written-out checks accept exactly what the regexps they replaced
// did, over names of every length around the limits and every byte in
// every position that matters.
func TestPlainNamesMatchTheirRegexps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func(string) bool
		re    *regexp.Regexp
	}{
		{"artifact", isArtifactName, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)},
		{"check", isCheckName, regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$`)},
	} {
		var names []string
		for _, n := range []int{0, 1, 2, 79, 80, 81, 127, 128, 129} {
			names = append(names, strings.Repeat("a", n))
		}
		for c := 0; c < 256; c++ {
			b := string(rune(c))
			if c >= 128 {
				b = string([]byte{byte(c)})
			}
			names = append(names, b, b+"x", "x"+b, "x"+b+"x")
		}
		names = append(names, "é", "xé", "vhd.json", "build-tools_1.2", ".hidden", "a/b", "../x")
		for _, n := range names {
			assert.Equal(t, tc.re.MatchString(n), tc.check(n), "%s name %q", tc.name, n)
		}
	}
}
