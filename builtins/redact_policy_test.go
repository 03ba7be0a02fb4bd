package builtins_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The credentials that are not secret()s: a SAS signature and a URL's
// userinfo password. Neither may appear in a step record (the journal and
// plans are made of them), a command's output or an output().
const (
	sasSignature     = "Zm9vYmFyU0lHTkFUVVJF"
	userinfoPassword = "hunter2-PASSWORD"
)

func TestSASAndURLPasswordsLeaveNoStepRecordOrOutput(t *testing.T) {
	s := newSnippetSandbox(t)
	sas := "https://acct.blob.core.windows.net/c/b.vhd?sv=2022-11-02&sr=b&sig=" + sasSignature
	withPassword := "https://builder:" + userinfoPassword + "@mirror.example.org/repo"
	res := s.mustRun(`
r = command(["echo", "`+sas+`", "`+withPassword+`"])
output("printed", r.output)
output("sas", "`+sas+`")
output("both", {"urls": ["`+sas+`", "`+withPassword+`"]})
`, nil)
	data, err := json.Marshal(res.Steps)
	require.NoError(t, err)
	outputs, err := json.Marshal(res.Outputs)
	require.NoError(t, err)
	for _, text := range []string{string(data), string(outputs)} {
		assert.NotContains(t, text, sasSignature)
		assert.NotContains(t, text, userinfoPassword)
	}
	out := outputsOf(res)
	assert.Equal(t, "https://acct.blob.core.windows.net/c/b.vhd?<redacted>", out["sas"])
	assert.Contains(t, out["printed"], "https://builder:<redacted>@mirror.example.org/repo")
	assert.Contains(t, out["printed"], "b.vhd?<redacted> ")
}
