package local

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/imgflow/imgflow/cloud"
)

// A state.json edited by hand, or written by a buggy tool, must not crash
// imgflow with a nil pointer when a later call walks it: decodeStateFile
// refuses it up front and names the entry to fix.

// entryShape describes one kind of entry in state.json: how its own
// fields decode, and its nested collections (a JSON object of entries
// keyed by name).
type entryShape struct {
	// fields decodes the entry without its collections.
	fields func(data []byte) error
	// collections are the entry's nested collections, by JSON field name.
	collections map[string]*entryShape
}

// decodeInto returns an entryShape field decoder for entries of type T.
func decodeInto[T any]() func([]byte) error {
	return func(data []byte) error {
		var v T
		return json.Unmarshal(data, &v)
	}
}

// stateShape is the layout of state.json, mirroring State.
func stateShape() *entryShape {
	leaf := func(decode func([]byte) error) *entryShape { return &entryShape{fields: decode} }
	definition := &entryShape{fields: decodeInto[cloud.ImageDefinition](), collections: map[string]*entryShape{
		"versions": leaf(decodeInto[cloud.ImageVersion]()),
	}}
	gallery := &entryShape{fields: decodeInto[cloud.Gallery](), collections: map[string]*entryShape{
		"definitions": definition,
	}}
	container := &entryShape{fields: decodeInto[ContainerState](), collections: map[string]*entryShape{
		"blobs": leaf(decodeInto[BlobState]()),
	}}
	account := &entryShape{fields: decodeInto[cloud.StorageAccount](), collections: map[string]*entryShape{
		"containers": container,
	}}
	group := &entryShape{fields: decodeInto[cloud.ResourceGroup](), collections: map[string]*entryShape{
		"galleries":        gallery,
		"images":           leaf(decodeInto[cloud.ManagedImage]()),
		"storage_accounts": account,
		"disks":            leaf(decodeInto[cloud.Disk]()),
		"disk_grants":      leaf(decodeInto[DiskGrantState]()),
	}}
	return &entryShape{fields: decodeInto[State](), collections: map[string]*entryShape{
		"resource_groups": group,
	}}
}

// decodeStateFile decodes the contents of state.json. A null or
// wrong-typed entry anywhere is an error naming it by its path, such as
// resource_groups["rg"].galleries["g"]: null (a null entry decodes
// without an error, to a nil pointer a later call would trip on).
func decodeStateFile(data []byte) (*State, error) {
	var s State
	err := json.Unmarshal(data, &s)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		line := 1 + bytes.Count(data[:min(int(syntax.Offset), len(data))], []byte("\n"))
		return nil, fmt.Errorf("line %d: %w", line, err)
	}
	if located := checkEntry(data, "", stateShape()); located != nil {
		return nil, fmt.Errorf("%w: fix or remove that entry", located)
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// checkEntry walks the JSON of one entry (path names it, "" for the whole
// file) and returns an error for its first null or mistyped entry or
// field, nil when it decodes.
func checkEntry(data []byte, path string, shape *entryShape) error {
	at := path
	if at == "" {
		at = "top level"
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return fmt.Errorf("%s: %s, want an object", at, describeJSON(data))
	}
	for _, name := range slices.Sorted(maps.Keys(shape.collections)) {
		raw, ok := fields[name]
		if !ok || isNull(raw) {
			continue // an absent or null collection is an empty one
		}
		delete(fields, name)
		collPath := joinPath(path, name)
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			return fmt.Errorf("%s: %s, want an object of entries by name", collPath, describeJSON(raw))
		}
		for _, k := range slices.Sorted(maps.Keys(entries)) {
			entryPath := collPath + "[" + strconv.Quote(k) + "]"
			if isNull(entries[k]) {
				return fmt.Errorf("%s: null", entryPath)
			}
			if err := checkEntry(entries[k], entryPath, shape.collections[name]); err != nil {
				return err
			}
		}
	}
	own, err := json.Marshal(fields)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	if err := shape.fields(own); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			got := typeErr.Value // a JSON kind, for a field inside a field
			if raw, ok := fields[typeErr.Field]; ok {
				got = describeJSON(raw)
			}
			return fmt.Errorf("%s: %s, want %s", joinPath(path, typeErr.Field), got, typeErr.Type)
		}
		return fmt.Errorf("%s: %w", at, err)
	}
	return nil
}

func joinPath(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// describeJSON shows a short JSON value in a message.
func describeJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	if s == "" {
		return "nothing"
	}
	return s
}
