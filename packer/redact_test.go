package packer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactorSecrets(t *testing.T) {
	r := newRedactor([]string{"s3cr3t", "", "s3cr3t-longer", "multi\nline-secret", `quo"te`})
	assert.Equal(t, "token=<sensitive> and <sensitive>", r.redact("token=s3cr3t and s3cr3t-longer"))
	assert.Equal(t, "a <sensitive> b", r.redact("a line-secret b"), "each line of a multi-line secret")
	assert.Equal(t, `{"v": "<sensitive>"}`, r.redact(`{"v": "quo\"te"}`), "JSON-escaped form")
	assert.Equal(t, "url?<redacted>", r.redact("url?sig=abc&sv=1"), "SAS queries go too")
	assert.Equal(t, []string{"<sensitive>", "ok"}, r.redactAll([]string{"s3cr3t", "ok"}))

	var none *redactor
	assert.Equal(t, "plain sig=<redacted>", none.redact("plain sig=x"))
}
