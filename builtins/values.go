package builtins

import (
	"fmt"
	"math"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// ToGo converts a Starlark value to a JSON-like Go value (nil, bool, int64,
// float64, string, []any, map[string]any). Structs become maps of their
// fields. Functions and other values are errors.
func ToGo(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case *Secret:
		return v.String(), nil // "<secret NAME>": the value never leaves
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.Int:
		n, ok := v.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s is too large", v)
		}
		return n, nil
	case starlark.Float:
		return float64(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Indexable: // list, tuple
		out := make([]any, v.Len())
		for i := range out {
			g, err := ToGo(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, kv := range v.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is not a string", kv[0])
			}
			g, err := ToGo(kv[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = g
		}
		return out, nil
	case *starlarkstruct.Struct:
		out := map[string]any{}
		for _, name := range v.AttrNames() {
			f, _ := v.Attr(name)
			g, err := ToGo(f)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			out[name] = g
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s values cannot be converted (want None, bool, int, float, string, list, dict or struct)", v.Type())
}

// FromGo converts a JSON-like Go value to Starlark. Map keys are sorted so
// the result is deterministic.
func FromGo(v any) starlark.Value {
	switch v := v.(type) {
	case nil:
		return starlark.None
	case starlark.Value:
		return v
	case bool:
		return starlark.Bool(v)
	case int:
		return starlark.MakeInt(v)
	case int32:
		return starlark.MakeInt64(int64(v))
	case int64:
		return starlark.MakeInt64(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return starlark.MakeInt64(int64(v))
		}
		return starlark.Float(v)
	case string:
		return starlark.String(v)
	case []string:
		out := make([]starlark.Value, len(v))
		for i, s := range v {
			out[i] = starlark.String(s)
		}
		return starlark.NewList(out)
	case []any:
		out := make([]starlark.Value, len(v))
		for i, e := range v {
			out[i] = FromGo(e)
		}
		return starlark.NewList(out)
	case []starlark.Value:
		return starlark.NewList(v)
	case map[string]string:
		d := starlark.NewDict(len(v))
		for _, k := range sortedKeys(v) {
			_ = d.SetKey(starlark.String(k), starlark.String(v[k]))
		}
		return d
	case map[string]any:
		d := starlark.NewDict(len(v))
		for _, k := range sortedKeys(v) {
			_ = d.SetKey(starlark.String(k), FromGo(v[k]))
		}
		return d
	}
	return starlark.String(fmt.Sprint(v))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fields builds a struct's members; values are converted with FromGo.
type fields map[string]any

// makeStruct builds the value a builtin returns: a struct whose constructor
// is the builtin's name, so it prints as gallery(id = …, …) and the
// parameter checks can tell the kinds apart.
func makeStruct(ctor string, f fields) *starlarkstruct.Struct {
	d := make(starlark.StringDict, len(f))
	for k, v := range f {
		d[k] = FromGo(v)
	}
	return starlarkstruct.FromStringDict(starlark.String(ctor), d)
}

// attrString reads a string field of a struct ("" when missing or not a
// string).
func attrString(s *starlarkstruct.Struct, name string) string {
	v, err := s.Attr(name)
	if err != nil {
		return ""
	}
	str, _ := v.(starlark.String)
	return string(str)
}

// attrStruct reads a struct field of a struct (nil when missing).
func attrStruct(s *starlarkstruct.Struct, name string) *starlarkstruct.Struct {
	v, err := s.Attr(name)
	if err != nil {
		return nil
	}
	st, _ := v.(*starlarkstruct.Struct)
	return st
}

// ctorOf is the name of the builtin that made a struct.
func ctorOf(s *starlarkstruct.Struct) string {
	c, _ := s.Constructor().(starlark.String)
	return string(c)
}

// MakeStruct builds a named struct from JSON-like Go values (for tools
// built on the interpreter, such as the test harness).
func MakeStruct(ctor string, f map[string]any) starlark.Value { return makeStruct(ctor, fields(f)) }
