package journal

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run cancelled while validating changed nothing: unless an earlier
// attempt journaled steps, there is nothing to resume.
func TestARunCancelledBeforeAnyChangeIsNotResumable(t *testing.T) {
	dir := t.TempDir()
	want := map[string]bool{}
	cancelled := func(pass string) Record {
		return Record{Type: TypeEnd, Status: StatusCancelled, Error: "terminated signal received", Pass: pass}
	}
	for _, c := range []struct {
		id        string
		records   []Record
		resumable bool
	}{
		{"validating", []Record{cancelled("validate")}, false},
		{"applying", []Record{cancelled("apply")}, true},
		{"applying-after-steps", []Record{step("a"), cancelled("apply")}, true},
		// An earlier attempt made steps; the resume was cancelled while
		// validating: the steps are still there to resume.
		{"resume-validating", []Record{step("a"), {Type: TypeEnd, Status: StatusFailed}, {Type: TypeResume}, cancelled("validate")}, true},
		// The end record of the earlier attempt no longer counts.
		{"resumed-after-validating", []Record{cancelled("validate"), {Type: TypeResume}}, true},
	} {
		want[c.id] = c.resumable
		j, err := Create(dir, header(c.id))
		require.NoError(t, err)
		for _, r := range c.records {
			require.NoError(t, j.Append(r))
		}
		require.NoError(t, j.Close())
	}
	runs, err := List(dir)
	require.NoError(t, err)
	require.Len(t, runs, len(want))
	for _, r := range runs {
		assert.Equal(t, want[r.RunID], r.Resumable, "run %s (%s)", r.RunID, r.Status)
	}
}
