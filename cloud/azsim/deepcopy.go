package azsim

import "time"

// Values crossing the Provider boundary are copied both ways
// (deepcopy.Of): a caller mutating a returned Tags map, or the map it
// passed in, must not reach the stored state behind the mutex.

// copyTime is an input time as stored: UTC and no monotonic reading, as
// a JSON round trip would give.
func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Round(0)
	return &u
}
