package deepcopy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type inner struct {
	Names []string
	Tags  map[string]string
	When  *time.Time
}

type outer struct {
	Name    string
	Inner   inner
	ByName  map[string]*inner
	List    []inner
	Any     any
	Nil     *inner
	NilMap  map[string]string
	Empty   []string
	private *inner
}

// A copy equals its original, keeps nil and empty apart, and shares no
// map, slice, pointer or interface value with it.
func TestOfSharesNothing(t *testing.T) {
	when := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	shared := &inner{Names: []string{"x"}}
	orig := outer{
		Name:    "o",
		Inner:   inner{Names: []string{"a"}, Tags: map[string]string{"k": "v"}, When: &when},
		ByName:  map[string]*inner{"b": {Names: []string{"b"}}},
		List:    []inner{{Tags: map[string]string{"l": "1"}}},
		Any:     map[string]any{"n": []any{1.0}},
		Empty:   []string{},
		private: shared,
	}
	cp := Of(orig)
	assert.Equal(t, orig, cp)
	assert.Nil(t, cp.Nil)
	assert.Nil(t, cp.NilMap)
	assert.NotNil(t, cp.Empty, "empty stays empty, not nil")

	cp.Inner.Names[0] = "changed"
	cp.Inner.Tags["k"] = "changed"
	*cp.Inner.When = when.AddDate(1, 0, 0)
	cp.ByName["b"].Names[0] = "changed"
	cp.List[0].Tags["l"] = "changed"
	cp.Any.(map[string]any)["n"].([]any)[0] = 2.0
	assert.Equal(t, "a", orig.Inner.Names[0])
	assert.Equal(t, "v", orig.Inner.Tags["k"])
	assert.Equal(t, when, *orig.Inner.When)
	assert.Equal(t, "b", orig.ByName["b"].Names[0])
	assert.Equal(t, "1", orig.List[0].Tags["l"])
	assert.Equal(t, 1.0, orig.Any.(map[string]any)["n"].([]any)[0])
	assert.Same(t, shared, cp.private, "unexported fields are copied as values")
}
