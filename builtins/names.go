package builtins

import "strings"

// isPlainName reports whether s is 1 to maxLen bytes, the first an ASCII
// letter or digit and the others letters, digits or bytes of more: the
// shape of an artifact's or a check's name. Written out rather than as a
// regexp: a bounded repetition such as {0,127} compiles to a program of
// as many states, which cost every plan a millisecond.
func isPlainName(s string, maxLen int, more string) bool {
	if s == "" || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune(more, rune(c))) {
			return false
		}
	}
	return true
}
