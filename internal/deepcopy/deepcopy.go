// Package deepcopy copies plain data (structs, maps, slices, pointers)
// without sharing any of it.
package deepcopy

import "reflect"

// Of returns a copy of v that shares no map, slice, pointer or interface
// value with it; unexported struct fields are copied as values (time.Time
// keeps its location). The simulated targets copy their state on every
// change: through reflection this costs a fraction of a JSON round trip.
func Of[T any](v T) T {
	var out T
	copyInto(reflect.ValueOf(&out).Elem(), reflect.ValueOf(&v).Elem())
	return out
}

// copyInto sets dst, which is settable, to a copy of src. It writes into
// dst in place, so a struct (or array) costs no allocation of its own:
// only what its pointers, maps and slices reach is allocated, once.
func copyInto(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		c := reflect.New(src.Type().Elem())
		copyInto(c.Elem(), src.Elem())
		dst.Set(c)
	case reflect.Map:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		t := src.Type()
		c := reflect.MakeMapWithSize(t, src.Len())
		// One key and two element holders for the whole map: the iterator
		// writes into them instead of allocating a Value per entry.
		k := reflect.New(t.Key()).Elem()
		e := reflect.New(t.Elem()).Elem()
		ce := reflect.New(t.Elem()).Elem()
		deep := needsCopy(t.Elem().Kind())
		var it reflect.MapIter
		it.Reset(src)
		for it.Next() {
			k.SetIterKey(&it)
			e.SetIterValue(&it)
			if deep {
				copyInto(ce, e)
				c.SetMapIndex(k, ce)
			} else {
				c.SetMapIndex(k, e)
			}
		}
		dst.Set(c)
	case reflect.Slice:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		c := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		reflect.Copy(c, src)
		if needsCopy(src.Type().Elem().Kind()) {
			for i := range src.Len() {
				copyInto(c.Index(i), src.Index(i))
			}
		}
		dst.Set(c)
	case reflect.Array:
		dst.Set(src)
		if needsCopy(src.Type().Elem().Kind()) {
			for i := range src.Len() {
				copyInto(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Interface:
		if src.IsNil() {
			dst.Set(src)
			return
		}
		e := src.Elem()
		c := reflect.New(e.Type()).Elem()
		copyInto(c, e)
		dst.Set(c)
	case reflect.Struct:
		dst.Set(src) // unexported fields (time.Time's) as they are: values
		for i := range src.NumField() {
			if f := dst.Field(i); f.CanSet() && needsCopy(f.Kind()) {
				copyInto(f, src.Field(i))
			}
		}
	default:
		dst.Set(src)
	}
}

// needsCopy says whether a value of kind k may share something with its
// original once assigned (strings are immutable: shared safely).
func needsCopy(k reflect.Kind) bool {
	switch k {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Array, reflect.Interface, reflect.Struct:
		return true
	}
	return false
}
