package vhd

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMergeRangesSortsMergesAndLeavesItsInputAlone(t *testing.T) {
	in := []Range{{Offset: 4096, Length: 512}, {Offset: 0, Length: 1024}, {Offset: 512, Length: 0}, {Offset: 1024, Length: 512}, {Offset: 4000, Length: 100}}
	orig := slices.Clone(in)
	assert.Equal(t, []Range{{Offset: 0, Length: 1536}, {Offset: 4000, Length: 608}}, MergeRanges(in))
	assert.Equal(t, orig, in)
	assert.Empty(t, MergeRanges(nil))
}
