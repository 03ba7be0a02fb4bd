package builtins

import (
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
)

// Kind is the declared type of a parameter: it checks a value before the
// builtin runs and names the type in the reference.
type Kind interface {
	// Check returns a short reason ("got int, want string") or nil.
	Check(v starlark.Value) error
	String() string
}

type simpleKind struct {
	name  string
	check func(starlark.Value) bool
}

func (k simpleKind) String() string { return k.name }

func (k simpleKind) Check(v starlark.Value) error {
	if k.check(v) {
		return nil
	}
	return fmt.Errorf("got %s, want %s", describe(v), k.name)
}

// normalizer is a Kind that rewrites the values it accepts into the one
// spelling the rest of imgflow sees (step records, journal keys, the
// cloud): Spec.call applies it after Check.
type normalizer interface {
	Normalize(v starlark.Value) starlark.Value
}

// describe names a value's type the way users see it: structs by the
// builtin that made them.
func describe(v starlark.Value) string {
	if s, ok := v.(*starlarkstruct.Struct); ok {
		if c, ok := s.Constructor().(starlark.String); ok && string(c) != "struct" {
			return string(c) + "(…)"
		}
	}
	return v.Type()
}

var (
	// KindString is a string.
	KindString Kind = &simpleKind{"string", func(v starlark.Value) bool { _, ok := v.(starlark.String); return ok }}
	// KindInt is an int.
	KindInt Kind = &simpleKind{"int", func(v starlark.Value) bool { _, ok := v.(starlark.Int); return ok }}
	// KindBool is a bool.
	KindBool Kind = &simpleKind{"bool", func(v starlark.Value) bool { _, ok := v.(starlark.Bool); return ok }}
	// KindCallable is a function.
	KindCallable Kind = &simpleKind{"function", func(v starlark.Value) bool { _, ok := v.(starlark.Callable); return ok }}
	// KindAny accepts any value; the builtin converts it.
	KindAny Kind = &simpleKind{"any", func(starlark.Value) bool { return true }}
	// KindStringList is a list or tuple of strings.
	KindStringList Kind = stringListKind{}
	// KindLocation is a region name, normalised as ARM does ("West Europe"
	// becomes westeurope).
	KindLocation Kind = locationKind{}
	// KindLocationList is a list of region names, each normalised.
	KindLocationList Kind = locationListKind{}
	// KindStringDict is a dict from string to string.
	KindStringDict Kind = &simpleKind{"dict of string to string", isStringDict}
	// KindDict is a dict with string keys and JSON-like values.
	KindDict Kind = &simpleKind{"dict", func(v starlark.Value) bool { _, ok := v.(*starlark.Dict); return ok }}
	// KindDuration is a duration string such as "90m" or "6h".
	KindDuration Kind = &simpleKind{`duration ("30m", "6h")`, func(v starlark.Value) bool {
		s, ok := v.(starlark.String)
		if !ok {
			return false
		}
		_, err := time.ParseDuration(string(s))
		return err == nil
	}}
)

// stringListKind is KindStringList; its reason names the element that is
// not a string, and says where a secret() goes instead (a secret in an
// argv would show in process lists, step lines and plans).
type stringListKind struct{}

func (stringListKind) String() string { return "list of strings" }

func (k stringListKind) Check(v starlark.Value) error {
	if isStringList(v) {
		return nil
	}
	seq, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr {
		return fmt.Errorf("got %s, want %s", describe(v), k)
	}
	for i := 0; i < seq.Len(); i++ {
		switch e := seq.Index(i).(type) {
		case starlark.String:
		case *Secret:
			return fmt.Errorf("got %s holding %s at [%d], want %s: a secret never goes into an argument list, where process lists, step lines and plans would show it; "+
				"pass it in env = {\"NAME\": secret(\"%s\")} and let the program read the variable", v.Type(), e, i, k, e.name)
		default:
			return fmt.Errorf("got %s holding %s at [%d], want %s", v.Type(), describe(e), i, k)
		}
	}
	return fmt.Errorf("got %s, want %s", describe(v), k)
}

type locationKind struct{}

func (locationKind) String() string               { return "string" }
func (locationKind) Check(v starlark.Value) error { return KindString.Check(v) }
func (locationKind) Normalize(v starlark.Value) starlark.Value {
	return starlark.String(cloud.NormalizeLocation(string(v.(starlark.String))))
}

type locationListKind struct{}

func (locationListKind) String() string               { return "list of strings" }
func (locationListKind) Check(v starlark.Value) error { return KindStringList.Check(v) }
func (locationListKind) Normalize(v starlark.Value) starlark.Value {
	return normalizeLocations(v)
}

// normalizeLocations normalises the region names of a list or tuple of
// strings, or the keys of a dict (replicate()'s region to count).
func normalizeLocations(v starlark.Value) starlark.Value {
	if d, ok := v.(*starlark.Dict); ok {
		out := starlark.NewDict(d.Len())
		for _, kv := range d.Items() {
			k := kv[0]
			if s, ok := k.(starlark.String); ok {
				k = starlark.String(cloud.NormalizeLocation(string(s)))
			}
			_ = out.SetKey(k, kv[1])
		}
		return out
	}
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return v
	}
	out := make([]starlark.Value, seq.Len())
	for i := range out {
		out[i] = seq.Index(i)
		if s, ok := out[i].(starlark.String); ok {
			out[i] = starlark.String(cloud.NormalizeLocation(string(s)))
		}
	}
	return starlark.NewList(out)
}

func isStringList(v starlark.Value) bool {
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return false
	}
	if _, isStr := v.(starlark.String); isStr {
		return false
	}
	for i := 0; i < seq.Len(); i++ {
		if _, ok := seq.Index(i).(starlark.String); !ok {
			return false
		}
	}
	return true
}

func isStringDict(v starlark.Value) bool {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return false
	}
	for _, kv := range d.Items() {
		if _, ok := kv[0].(starlark.String); !ok {
			return false
		}
		if _, ok := kv[1].(starlark.String); !ok {
			return false
		}
	}
	return true
}

// structKind accepts structs made by the named builtins.
type structKind []string

// KindStruct accepts the result of one of the named builtins, e.g.
// KindStruct("gallery").
func KindStruct(ctors ...string) Kind { return structKind(ctors) }

func (k structKind) String() string { return strings.Join(k, " or ") }

func (k structKind) Check(v starlark.Value) error {
	if s, ok := v.(*starlarkstruct.Struct); ok {
		if c, ok := s.Constructor().(starlark.String); ok {
			for _, want := range k {
				if string(c) == want {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("got %s, want %s (the value %s returns)", describe(v), k, strings.Join(k, "() or ")+"()")
}

// oneOf accepts a value any of its kinds accepts.
type oneOf []Kind

// KindOneOf accepts values of any of the kinds.
func KindOneOf(kinds ...Kind) Kind { return oneOf(kinds) }

func (k oneOf) String() string {
	names := make([]string, len(k))
	for i, kk := range k {
		names[i] = kk.String()
	}
	return strings.Join(names, " or ")
}

func (k oneOf) Check(v starlark.Value) error {
	for _, kk := range k {
		if kk.Check(v) == nil {
			return nil
		}
	}
	return fmt.Errorf("got %s, want %s", describe(v), k)
}
