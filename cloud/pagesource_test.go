package cloud_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/vhd"
)

func TestPageSourceDataRanges(t *testing.T) {
	r := strings.NewReader("")
	rs, err := cloud.PageSource{Reader: r, Size: 8192, Ranges: []vhd.Range{{Offset: 4096, Length: 512}, {Offset: 0, Length: 100}, {Offset: 50, Length: 100}, {Offset: 600, Length: 0}}}.DataRanges()
	require.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: 0, Length: 150}, {Offset: 4096, Length: 512}}, rs, "sorted, merged, empty dropped")

	rs, err = cloud.PageSource{Reader: r, Size: 1024}.DataRanges()
	require.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: 0, Length: 1024}}, rs, "nil ranges: all of it")
	rs, err = cloud.PageSource{Size: 0}.DataRanges()
	require.NoError(t, err)
	assert.Empty(t, rs)

	for _, bad := range []cloud.PageSource{
		{Reader: r, Size: 1024, Ranges: []vhd.Range{{Offset: 1000, Length: 100}}},
		{Reader: r, Size: 1024, Ranges: []vhd.Range{{Offset: -1, Length: 10}}},
		{Size: 1024},
		{Size: 1024, Ranges: []vhd.Range{{Offset: 0, Length: 512}}},
	} {
		_, err := bad.DataRanges()
		assert.Error(t, err, "%+v", bad)
	}
	_, err = cloud.PageSource{Size: 1024, Ranges: []vhd.Range{}}.DataRanges()
	assert.NoError(t, err, "no data ranges need no reader")
}
