package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
)

// Each record is a JSON object line that ends in its checksum:
//
//	{"type":"step",…,"crc":"1a2b3c4d"}
//
// the CRC-32C of the line as it would be without its crc member. The
// checksum is over the bytes written, not a re-encoding, so it holds for
// any value a record carries. A record whose checksum fails is never
// replayed: one flipped bit in a step result would otherwise come back as
// a resource name.
//
// Journals written before records had checksums are read unverified, with
// a warning (File.Unverified, Summary.Warning): refusing them would make
// an upgrade lose the only record of an interrupted run's temporary
// resources and what it published, and they pass every other check (the
// header, the shape of each record). Once a record has a checksum, every
// later one must have one too.

const (
	crcPrefix = `,"crc":"`
	crcSuffix = crcPrefix + `00000000"}` // the length of what encode appends
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// tornMark terminates a torn last line that an append blob cannot drop
// (see AzureStore.Open): no JSON record contains a NUL byte, so a line
// ending in it is known to be a torn record, skipped, and never taken for
// corruption.
const tornMark = "\x00torn\n"

// encode is the line of a record: its JSON with the checksum, and a newline.
func encode(rec Record) ([]byte, error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	sum := crc32.Checksum(data, castagnoli)
	line := make([]byte, 0, len(data)+len(crcSuffix)+1)
	line = append(line, data[:len(data)-1]...)
	line = fmt.Appendf(line, `%s%08x"}`, crcPrefix, sum)
	return append(line, '\n'), nil
}

// CorruptError is a journal line that cannot be trusted: it does not parse,
// its checksum fails, or it is not a record of the shape its type needs.
type CorruptError struct {
	Path   string // the journal's file, or blob URL without a query
	Line   int    // 1-based
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("journal %s:%d: %s", e.Path, e.Line, e.Reason)
}

// IsCorrupt reports whether err is, or wraps, a CorruptError.
func IsCorrupt(err error) bool {
	var c *CorruptError
	return errors.As(err, &c)
}

// parsed is what read found in a journal.
type parsed struct {
	records []Record
	// good is the offset just after the last complete line: a torn tail
	// after it is dropped.
	good int64
	// unverified: the journal has records without checksums (written by
	// an imgflow from before they had them).
	unverified bool
}

// read parses a journal's complete lines. A torn last line (no newline: a
// crash mid-write) is ignored, and so is a line ending in tornMark; any
// other line that fails to parse, fails its checksum or is not a valid
// record is a CorruptError naming path and line, and nothing of the
// journal is returned: a run is never resumed or cleaned up from part of
// its record. runID, when not empty, is the run the header must name.
func read(r io.Reader, path, runID string) (parsed, error) {
	br := bufio.NewReader(r)
	var p parsed
	var off int64
	checked := false
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return parsed{}, fmt.Errorf("journal %s: %w", path, err)
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			return p, nil // EOF, or a torn last line
		}
		off += int64(len(line))
		if bytes.HasSuffix(line, []byte(tornMark)) {
			p.good = off
			continue
		}
		rec, hasSum, reason := decode(bytes.TrimSuffix(line, []byte("\n")))
		switch {
		case reason == "" && !hasSum && checked:
			reason = "no checksum, although the records before it have one"
		case reason == "":
			reason = validate(rec, n, runID)
		}
		if reason != "" {
			return parsed{}, &CorruptError{Path: path, Line: n, Reason: reason}
		}
		checked = checked || hasSum
		p.unverified = p.unverified || !hasSum
		p.records = append(p.records, rec)
		p.good = off
	}
}

// decode parses one line, checking its checksum when it has one.
func decode(line []byte) (rec Record, hasSum bool, reason string) {
	body := line
	if i := len(line) - len(crcSuffix); i > 0 && bytes.HasPrefix(line[i:], []byte(crcPrefix)) && bytes.HasSuffix(line, []byte(`"}`)) {
		want, err := strconv.ParseUint(string(line[i+len(crcPrefix):len(line)-2]), 16, 32)
		if err != nil {
			return Record{}, false, "its checksum is not 8 hex digits"
		}
		body = append(append([]byte(nil), line[:i]...), '}')
		if got := crc32.Checksum(body, castagnoli); uint64(got) != want {
			return Record{}, false, fmt.Sprintf("checksum mismatch (the line was changed after it was written: crc %08x, want %08x)", got, want)
		}
		hasSum = true
	}
	if !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return Record{}, hasSum, "not a JSON object"
	}
	if err := json.Unmarshal(body, &rec); err != nil {
		return Record{}, hasSum, fmt.Sprintf("not a journal record: %v", err)
	}
	return rec, hasSum, ""
}

// validate checks that record n (1-based) has what its type needs.
func validate(rec Record, n int, runID string) string {
	if n == 1 {
		switch {
		case rec.Type != TypeRun:
			return fmt.Sprintf("the first record is a %q record, not the run's header (type \"run\")", rec.Type)
		case rec.RunID == "":
			return "the run header has no run id"
		case runID != "" && rec.RunID != runID:
			return fmt.Sprintf("the run header names run %q, but the journal is that of run %q", rec.RunID, runID)
		}
		return ""
	}
	switch rec.Type {
	case TypeRun:
		return "a second run header"
	case TypeResume:
	case TypeStep:
		if rec.Step == nil || rec.Step.Key == "" {
			return "a step record without its step"
		}
	case TypeCleanup:
		if rec.Cleanup == nil || rec.Cleanup.ID == "" {
			return "a cleanup record without its cleanup"
		}
	case TypeCleanupDone:
		if rec.CleanupID == "" {
			return "a cleanup_done record without its cleanup id"
		}
	case TypeEnd:
		if rec.Status == "" {
			return "an end record without its status"
		}
	default:
		return fmt.Sprintf("unknown record type %q", rec.Type)
	}
	return ""
}
