package packer

import (
	"math/rand"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
)

// actions finds what the template regexp it replaced finds, on strings
// made of the characters that matter.
func TestActionsMatchTheTemplateRegexp(t *testing.T) {
	re := regexp.MustCompile(`(?s)\{\{(.*?)\}\}`)
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"{", "}", "{{", "}}", "a", " ", "\n", "user `x`"}
	for range 5000 {
		var s string
		for range rng.Intn(12) {
			s += pieces[rng.Intn(len(pieces))]
		}
		var got [][]int
		for start, end := range actions(s) {
			got = append(got, []int{start, end})
		}
		var want [][]int
		for _, m := range re.FindAllStringIndex(s, -1) {
			want = append(want, m)
		}
		assert.Equal(t, want, got, "%q", s)
	}
}
