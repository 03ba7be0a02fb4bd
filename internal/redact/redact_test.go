package redact

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSAS(t *testing.T) {
	cases := map[string]string{
		`value "https://a.blob.core.windows.net/c/b.vhd?sv=2021&sp=r&sig=abc%2Bdef" is not an integer`: `value "https://a.blob.core.windows.net/c/b.vhd?<redacted>" is not an integer`,
		`copy from https://x/y?sig=AAA&se=2026 failed`:                                                 `copy from https://x/y?<redacted> failed`,
		`token sig=QQQ&sv=1`:                      `token sig=<redacted>&sv=1`,
		`encoded %3Fsv%3D1%26sig%3DZZZ end`:       `encoded %3Fsv%3D1%26sig=<redacted> end`,
		`signature of the design stays`:           `signature of the design stays`,
		`https://x/y?sv=2021&sp=r (no signature)`: `https://x/y?sv=2021&sp=r (no signature)`,
		// A managed disk's read SAS (Disks_GrantAccess) and packer's
		// artifact lines (OSDiskUriReadOnlySas: …).
		"https://md-abc.z7.blob.storage.azure.net/x/abcd?sv=2018-03-28&sr=b&si=1&sig=AbC%2Bd%3D": "https://md-abc.z7.blob.storage.azure.net/x/abcd?<redacted>",
		"OSDiskUriReadOnlySas: https://a/b.vhd?se=2021-01-31T00%3A00%3A00Z&sig=abc&sp=r":         "OSDiskUriReadOnlySas: https://a/b.vhd?<redacted>",
		// Go's HTTP client quotes the URL in its errors.
		`copy "http://127.0.0.1:1/a/c/b?sig=x&sv=1": dial tcp`:  `copy "http://127.0.0.1:1/a/c/b?<redacted>": dial tcp`,
		"two: https://a/c/b?sig=1 and https://a/c/d?sv=2&SIG=3": "two: https://a/c/b?<redacted> and https://a/c/d?<redacted>",
		"x?SIG=zzz": "x?<redacted>",
		// Headers and bare parameters: only the signature goes.
		"x-ms-copy-source: sig=abc&se=2020": "x-ms-copy-source: sig=<redacted>&se=2020",
		"sig=a and sig=b":                   "sig=<redacted> and sig=<redacted>",
		// A storage connection string carrying a SAS.
		"BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022&ss=b&sig=K3y%3D": "BlobEndpoint=https://a.blob.core.windows.net/;SharedAccessSignature=sv=2022&ss=b&sig=<redacted>",
		// Words containing "sig" are not signatures.
		"nothing secret here, signal=1 signature=ok design=fine": "nothing secret here, signal=1 signature=ok design=fine",
		"https://acct.blob.core.windows.net/c/b.vhd":             "https://acct.blob.core.windows.net/c/b.vhd",
	}
	for in, want := range cases {
		got := SAS(in)
		assert.Equal(t, want, got, in)
		assert.NotRegexp(t, `(?i)sig(=|%3D)[^<]`, got, "no signature value is left")
	}
}

// Every step's summary and error goes through SAS: a text with no sig=
// (words like signature or design) is answered without running, or
// compiling, the regexps.
func TestSASSkipsTextsWithoutASignature(t *testing.T) {
	assert.Zero(t, testing.AllocsPerRun(10, func() { SAS("the signature of the design stays, sig is no parameter") }))
	assert.Zero(t, testing.AllocsPerRun(10, func() { SAS("The Signature Of The Design Stays, SIG Is No Parameter") }), "capitals too")
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.blob.core.windows.net/c/b.vhd?sv=2021&sp=r&sig=abc": "https://a.blob.core.windows.net/c/b.vhd?<redacted>",
		"https://bucket.s3.amazonaws.com/x.iso?X-Amz-Signature=abc":    "https://bucket.s3.amazonaws.com/x.iso?<redacted>",
		"https://a.blob.core.windows.net/c/b.vhd":                      "https://a.blob.core.windows.net/c/b.vhd",
		"https://a.blob.core.windows.net/c/b.vhd?":                     "https://a.blob.core.windows.net/c/b.vhd?<redacted>",
	} {
		assert.Equal(t, want, URL(in), in)
	}
}

func TestValues(t *testing.T) {
	secrets := SecretValues([]string{"HOME=/root", "IMGFLOW_SECRET_UA=tok-123", "IMGFLOW_SECRET_LONG=tok-123-extra", "IMGFLOW_SECRET_SHORT=ab", "IMGFLOW_SECRET_EMPTY="})
	assert.ElementsMatch(t, []string{"tok-123", "tok-123-extra", "ab"}, secrets)
	got := Values(`value "tok-123-extra" and tok-123, not ab`, secrets)
	assert.Equal(t, `value "<secret>" and <secret>, not ab`, got, "longest first; values under 4 characters are left alone")
	assert.Equal(t, `x <secret> ?<redacted>`, Text("x tok-123 ?sig=1", secrets))
}

func TestErrorKeepsTheChainWithoutTheSAS(t *testing.T) {
	assert.Nil(t, Error(nil))
	plain := errors.New("no secret here")
	assert.Same(t, plain, Error(plain), "an error without a SAS is returned as it is")

	ue := &url.Error{Op: "Put", URL: "https://a.blob.core.windows.net/c/r1.jsonl?sv=2024&sig=SECRET", Err: context.DeadlineExceeded}
	err := Error(fmt.Errorf("append: %w", ue))
	assert.NotContains(t, err.Error(), "SECRET")
	assert.Contains(t, err.Error(), "https://a.blob.core.windows.net/c/r1.jsonl?<redacted>")
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the chain is kept")

	err = Error(fmt.Errorf("lease: %w", errors.New("denied for ?sp=r&sig=SECRET")))
	assert.Equal(t, "lease: denied for ?<redacted>", err.Error())
	assert.NotNil(t, errors.Unwrap(err))
}

// A URL's userinfo password goes wherever a SAS goes; the user stays.
func TestUserinfoPassword(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:PASSWORD@host/x":                          "https://user:<redacted>@host/x",
		`env URL="https://me:p%40ss@h.example/a?sig=zz" set`:    `env URL="https://me:<redacted>@h.example/a?<redacted>" set`,
		"ftp://anon@host/x and mail a@b.example":                "ftp://anon@host/x and mail a@b.example",
		"git+ssh://git:tok3n@example.org:22/r.git, http://h/ok": "git+ssh://git:<redacted>@example.org:22/r.git, http://h/ok",
		"host:port@thing without a scheme":                      "host:port@thing without a scheme",
	} {
		assert.Equal(t, want, SAS(in), in)
		assert.Equal(t, want != in, HasCredential(in), in)
	}
	assert.Equal(t, "https://u:<redacted>@h/c?<redacted>", URL("https://u:pw@h/c?sv=1"))
}

func TestURLQueries(t *testing.T) {
	assert.Equal(t, "get https://a/b?<redacted> and https://u:<redacted>@c/d?<redacted> then http://e/f",
		URLQueries("get https://a/b?x=1&token=2 and https://u:p@c/d?sig=3 then http://e/f"))
	assert.Equal(t, "https://a/b?<redacted>", URLQueries("https://a/b?sv=1"))
	assert.Equal(t, "what? nothing", URLQueries("what? nothing"))
}

func TestCheckSecretEnvRefusesShortSecrets(t *testing.T) {
	assert.NoError(t, CheckSecretEnv([]string{"IMGFLOW_SECRET_UA_TOKEN=abcd", "IMGFLOW_SECRET_EMPTY=", "OTHER=x"}))
	err := CheckSecretEnv([]string{"IMGFLOW_SECRET_UA_TOKEN=x", "PATH=/bin", "IMGFLOW_SECRET_PIN=123"})
	assert.ErrorContains(t, err, "IMGFLOW_SECRET_UA_TOKEN holds fewer than 4 characters")
	assert.ErrorContains(t, err, "unset IMGFLOW_SECRET_UA_TOKEN")
	assert.ErrorContains(t, err, "IMGFLOW_SECRET_PIN holds fewer than 4 characters")
	assert.NotContains(t, err.Error(), "123", "the value is not shown")
}

func TestChildEnvKeepsImgflowsOwnVariables(t *testing.T) {
	env := []string{"HOME=/home/u", "IMGFLOW_SECRET_TOKEN=s3cr3t-value", "IMGFLOW_AZURE_STORAGE_KEY=key", "IMGFLOW_CACHE_DIR=/c", "PATH=/bin", "MY_IMGFLOW_X=kept"}
	assert.Equal(t, []string{"HOME=/home/u", "PATH=/bin", "MY_IMGFLOW_X=kept"}, ChildEnv(env))
	assert.Len(t, env, 6, "environ itself is not changed")
}

// Strict is URLQueries then SAS: one pass fewer, the same text.
func TestStrictIsURLQueriesThenSAS(t *testing.T) {
	for _, s := range []string{
		"",
		`set -- "$@"; echo done`,
		"git clone https://user:p4ss@example.com/repo.git && echo $@",
		"curl 'https://acct.blob.core.windows.net/c/b?sv=2021&sig=abc%2B' -H 'x'",
		"SharedAccessSignature=sv=2021&sig=abc;BlobEndpoint=https://a.blob.core.windows.net/",
		"see https://example.com/page?x=1 and ftp://u:pw@host/ and mail a@b",
		"HTTPS://U:PW@HOST/?SIG=X",
	} {
		assert.Equal(t, SAS(URLQueries(s)), Strict(s), s)
	}
	assert.Equal(t, "https://user:<redacted>@example.com/x", Strict("https://user:secret@example.com/x"))
}
