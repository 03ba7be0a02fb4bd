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
	}
	for in, want := range cases {
		assert.Equal(t, want, SAS(in), in)
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
