package cloud

import (
	"errors"
	"fmt"

	"github.com/imgflow/imgflow/vhd"
)

// DataRanges returns the source's data ranges checked against its size,
// sorted and merged; nil Ranges mean all of it (nothing when Size is 0).
// Its error is a plain one: the targets' UploadPageBlob answer it as
// Azure's InvalidParameter (azrules.InvalidParameter) for the blob.
func (s PageSource) DataRanges() ([]vhd.Range, error) {
	if s.Ranges == nil {
		if s.Size == 0 {
			return nil, nil
		}
		if s.Reader == nil {
			return nil, fmt.Errorf("page source of %d bytes has no reader", s.Size)
		}
		return []vhd.Range{{Offset: 0, Length: s.Size}}, nil
	}
	for _, r := range s.Ranges {
		if r.Offset < 0 || r.Length < 0 || r.Offset+r.Length > s.Size {
			return nil, fmt.Errorf("page range [%d, +%d) is outside the blob of %d bytes", r.Offset, r.Length, s.Size)
		}
	}
	rs := vhd.MergeRanges(s.Ranges)
	if len(rs) > 0 && s.Reader == nil {
		return nil, errors.New("page source with data ranges has no reader")
	}
	return rs, nil
}
