package interp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.starlark.net/starlark"
)

// plantedSAS is a made-up SAS URL: its signature must never be printed.
const plantedSAS = "https://acct.blob.core.windows.net/vhds/disk.vhd?sv=2022-11-02&sp=r&sig=PLANTEDSIGNATURE"

// TestRunErrorsNeverQuoteASASOrASecret plants a SAS URL and a secret()'s
// value in every kind of error that quotes a value: a --var conversion, a
// fail() message, a builtin's validation message and a failing cleanup.
func TestRunErrorsNeverQuoteASASOrASecret(t *testing.T) {
	const secretValue = "planted-secret-value"
	t.Setenv("IMGFLOW_SECRET_PLANTED", secretValue)
	cases := map[string]map[string]starlark.Value{
		"conversion":        {"count": starlark.String(plantedSAS)},
		"conversion-secret": {"count": starlark.String(secretValue)},
		"fail":              {"url": starlark.String(plantedSAS)},
		"fail-secret":       {"url": starlark.String(secretValue)},
		"builtin":           {"url": starlark.String(plantedSAS), "mode": starlark.String("builtin")},
		"cleanup":           {"url": starlark.String(plantedSAS), "mode": starlark.String("cleanup")},
	}
	for name, vars := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			f.cfg.Vars = vars
			res := f.run(t, "//testdata/interp/quotes_values.star")
			if !assert.Error(t, res.Err) {
				return
			}
			msg := res.Err.Error()
			assert.NotContains(t, msg, "PLANTEDSIGNATURE")
			assert.NotContains(t, msg, secretValue)
			assert.Regexp(t, `<redacted>|<secret>`, msg, "the error still says which value it was about")
		})
	}
}
