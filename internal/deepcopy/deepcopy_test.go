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
	ByValue map[string]inner
	Arr     [2]*inner
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
		ByValue: map[string]inner{"v": {Tags: map[string]string{"v": "1"}}, "w": {Tags: map[string]string{"w": "1"}}},
		Arr:     [2]*inner{{Names: []string{"a0"}}},
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
	cp.ByValue["v"].Tags["v"] = "changed"
	cp.Arr[0].Names[0] = "changed"
	cp.Any.(map[string]any)["n"].([]any)[0] = 2.0
	assert.Equal(t, "a", orig.Inner.Names[0])
	assert.Equal(t, "v", orig.Inner.Tags["k"])
	assert.Equal(t, when, *orig.Inner.When)
	assert.Equal(t, "b", orig.ByName["b"].Names[0])
	assert.Equal(t, "1", orig.List[0].Tags["l"])
	assert.Equal(t, map[string]string{"v": "1"}, orig.ByValue["v"].Tags)
	assert.Equal(t, map[string]string{"w": "1"}, cp.ByValue["w"].Tags, "each entry its own copy")
	assert.Equal(t, "a0", orig.Arr[0].Names[0])
	assert.Equal(t, 1.0, orig.Any.(map[string]any)["n"].([]any)[0])
	assert.Same(t, shared, cp.private, "unexported fields are copied as values")
}

type stamped struct {
	Created, Changed time.Time
	Inner            struct{ N int }
	Name             string
}

// A struct is copied in place: copying a pointer to one with nested
// structs and no references allocates the one pointed-to value (besides
// Of's two holders of its argument and result), and a map of them its
// entries, the map and the iteration's three holders.
func TestOfAllocatesOnlyWhatItReaches(t *testing.T) {
	s := &stamped{Created: time.Now(), Name: "s"}
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = Of(s) }), 3.0)
	m := map[string]*stamped{"a": s, "b": s, "c": s}
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { _ = Of(m) }), 10.0)
}
