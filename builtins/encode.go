package builtins

import (
	"encoding/json"
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// structTag marks an encoded struct, so a journaled result decodes back
// into the struct its builtin returned (gallery(…), not a dict).
const structTag = "__struct__"

// EncodeValue encodes a builtin's result for the journal. Unlike ToGo it
// keeps struct constructors, so DecodeValue restores the same value.
func EncodeValue(v starlark.Value) (json.RawMessage, error) {
	g, err := encodable(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(g)
}

func encodable(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case *starlarkstruct.Struct:
		out := map[string]any{structTag: ctorOf(v)}
		for _, name := range v.AttrNames() {
			f, _ := v.Attr(name)
			g, err := encodable(f)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", name, err)
			}
			out[name] = g
		}
		return out, nil
	case starlark.Indexable:
		if _, isStr := v.(starlark.String); !isStr {
			out := make([]any, v.Len())
			for i := range out {
				g, err := encodable(v.Index(i))
				if err != nil {
					return nil, err
				}
				out[i] = g
			}
			return out, nil
		}
	case *starlark.Dict:
		out := map[string]any{}
		for _, kv := range v.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is not a string", kv[0])
			}
			g, err := encodable(kv[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = g
		}
		return out, nil
	}
	return ToGo(v)
}

// DecodeValue is the inverse of EncodeValue.
func DecodeValue(data json.RawMessage) (starlark.Value, error) {
	var g any
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("decode journaled value: %w", err)
	}
	return decodeGo(g), nil
}

func decodeGo(g any) starlark.Value {
	switch g := g.(type) {
	case map[string]any:
		if ctor, ok := g[structTag].(string); ok {
			d := starlark.StringDict{}
			for k, v := range g {
				if k != structTag {
					d[k] = decodeGo(v)
				}
			}
			return starlarkstruct.FromStringDict(starlark.String(ctor), d)
		}
		keys := make([]string, 0, len(g))
		for k := range g {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		dict := starlark.NewDict(len(g))
		for _, k := range keys {
			_ = dict.SetKey(starlark.String(k), decodeGo(g[k]))
		}
		return dict
	case []any:
		out := make([]starlark.Value, len(g))
		for i, e := range g {
			out[i] = decodeGo(e)
		}
		return starlark.NewList(out)
	}
	return FromGo(g)
}
