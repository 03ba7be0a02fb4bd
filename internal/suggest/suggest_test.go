package suggest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	cases := []struct {
		name       string
		candidates []string
		want       string
		ok         bool
	}{
		{"plna", []string{"run", "plan", "runs"}, "plan", true},
		{"vra", []string{"var", "vars-file", "root"}, "var", true},
		{"replication", []string{"replicated_regions", "replica_count", "location"}, "", false},
		{"replicas", []string{"replica_count", "replicas_per_region"}, "", false},
		{"ubuntu", []string{"Ubuntu", "Mariner"}, "Ubuntu", true},
		{"chanel", []string{"channel", "arch"}, "channel", true},
		{"x", []string{"plan", "run"}, "", false},
		{"stable", []string{"stable", "beta"}, "stable", true},
	}
	for _, c := range cases {
		got, ok := Closest(c.name, c.candidates)
		assert.Equal(t, c.ok, ok, c.name)
		if c.ok {
			assert.Equal(t, c.want, got, c.name)
		}
	}
	assert.Equal(t, "; did you mean plan?", Hint("plna", []string{"plan"}))
	assert.Equal(t, "", Hint("zzzz", []string{"plan"}))
}
