package vhd

import (
	"cmp"
	"slices"
)

// MergeRanges returns ranges sorted, without empty ones, overlapping or
// adjacent ones merged; ranges itself is not changed.
func MergeRanges(ranges []Range) []Range {
	rs := slices.Clone(ranges)
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Offset, b.Offset) })
	var out []Range
	for _, r := range rs {
		if r.Length <= 0 {
			continue
		}
		if n := len(out); n > 0 && r.Offset <= out[n-1].Offset+out[n-1].Length {
			last := &out[n-1]
			last.Length = max(last.Offset+last.Length, r.Offset+r.Length) - last.Offset
			continue
		}
		out = append(out, r)
	}
	return out
}
