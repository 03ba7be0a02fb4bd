// Package suggest finds the name a user most likely meant, for "did you
// mean" hints on unknown commands, flags, params and choices.
package suggest

import "strings"

// Closest returns the candidate nearest to name: one equal but for case
// first, else one within a few edits (about a third of name's length, at
// least one; two when name is long enough). ok is false when none is
// close enough to be worth suggesting.
func Closest(name string, candidates []string) (best string, ok bool) {
	for _, c := range candidates {
		if strings.EqualFold(c, name) {
			return c, true
		}
	}
	limit := len(name) / 3
	if limit < 1 {
		limit = 1
	}
	bestDist := limit + 1
	for _, c := range candidates {
		if d := distance(strings.ToLower(name), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, bestDist <= limit
}

// Hint is "; did you mean X?" for the closest candidate, or "".
func Hint(name string, candidates []string) string {
	if c, ok := Closest(name, candidates); ok {
		return "; did you mean " + c + "?"
	}
	return ""
}

// distance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of two adjacent bytes (plna, -vra).
func distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
