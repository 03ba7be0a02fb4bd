package packer

import (
	"fmt"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ctyToGo converts a known value to encoding/json's shapes: string,
// float64, bool, []any, map[string]any; null is nil.
func ctyToGo(v cty.Value) (any, error) {
	v, _ = v.Unmark()
	if v.IsNull() {
		return nil, nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f, nil
	case t == cty.Bool:
		return v.True(), nil
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			gv, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, gv)
		}
		return out, nil
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			gv, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = gv
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot use a value of type %s here", t.FriendlyName())
}

// ctyString shows a constant value as a string: strings as they are,
// numbers and booleans as written, anything else as JSON.
func ctyString(v cty.Value) (string, error) {
	if v.IsNull() {
		return "", nil
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), nil
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), nil
	case cty.Bool:
		if v.True() {
			return "true", nil
		}
		return "false", nil
	}
	data, err := ctyjson.Marshal(v, v.Type())
	return string(data), err
}
