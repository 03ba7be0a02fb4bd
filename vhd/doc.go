// Package vhd reads, validates and creates fixed VHD files, the disk format
// Azure accepts for page-blob uploads.
//
// A VHD is a raw disk image followed by a 512-byte footer (see [Footer]).
// Azure accepts only a narrow subset of what the VHD specification allows:
// the disk must be of the fixed type, its virtual size must be a whole number
// of MiB, and the file must be exactly the virtual size plus the footer.
// Uploads that break these rules fail late, after a possibly long transfer,
// with terse messages. [Validate] checks every rule up front and reports all
// violations at once, each with the command that fixes it.
//
// [CreateFixed] makes an empty, sparse fixed VHD that satisfies the rules,
// and [DataRanges] together with [IsZero] let an uploader skip the holes and
// all-zero chunks that make up most of a typical disk image.
//
// # Errors
//
// Validation failures are returned as a [*ValidationError] listing every
// [Problem]. Each problem carries one of the sentinel errors [ErrNotVHD],
// [ErrChecksum], [ErrDynamic], [ErrDiskType], [ErrNotAligned] and
// [ErrSizeMismatch], and the [*ValidationError] unwraps to all of them, so
// callers test with errors.Is(err, vhd.ErrDynamic) whether or not other
// problems were found too.
package vhd
