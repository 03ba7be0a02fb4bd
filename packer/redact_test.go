package packer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactSAS(t *testing.T) {
	assert.Equal(t, "https://a/b.vhd?sv=1&sig=REDACTED&sp=r", RedactSAS("https://a/b.vhd?sv=1&sig=abc%2Bdef%3D&sp=r"))
	assert.Equal(t, "x?SIG=REDACTED", RedactSAS("x?SIG=zzz"))
	assert.Equal(t, "sig=REDACTED and sig=REDACTED", RedactSAS("sig=a and sig=b"))
	assert.Equal(t, "signature=ok design=fine", RedactSAS("signature=ok design=fine"))
}

func TestRedactorSecrets(t *testing.T) {
	r := newRedactor([]string{"s3cr3t", "", "s3cr3t-longer", "multi\nline-secret", `quo"te`})
	assert.Equal(t, "token=<sensitive> and <sensitive>", r.redact("token=s3cr3t and s3cr3t-longer"))
	assert.Equal(t, "a <sensitive> b", r.redact("a line-secret b"), "each line of a multi-line secret")
	assert.Equal(t, `{"v": "<sensitive>"}`, r.redact(`{"v": "quo\"te"}`), "JSON-escaped form")
	assert.Equal(t, "url?sig=REDACTED&sv=1", r.redact("url?sig=abc&sv=1"))
	assert.Equal(t, []string{"<sensitive>", "ok"}, r.redactAll([]string{"s3cr3t", "ok"}))

	var none *redactor
	assert.Equal(t, "plain sig=REDACTED", none.redact("plain sig=x"))
}
