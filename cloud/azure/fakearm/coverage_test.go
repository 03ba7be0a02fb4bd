package fakearm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every SDK operation the Azure target calls has a contract fixture
// (testdata/azure/contract, in the shape of a REST spec example) that the
// contract tests replay against the fake: what imgflow sends is checked
// against what Azure documents, not only against the fake.
func TestEveryAzureTargetCallHasAContractFixture(t *testing.T) {
	covered := map[string][]string{}
	for _, dir := range []string{"../../../testdata/azure/contract", "../../../testdata/azure/contract/vm"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.json"))
		require.NoError(t, err)
		for _, file := range files {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			var c struct {
				Follows string `json:"follows"`
				Request struct {
					Method     string `json:"method"`
					Path       string `json:"path"`
					APIVersion string `json:"apiVersion"`
				} `json:"request"`
			}
			require.NoError(t, json.Unmarshal(data, &c), file)
			assert.NotEmpty(t, c.Follows, "%s names the example it follows", file)
			assert.NotEmpty(t, c.Request.APIVersion, "%s names its API version", file)
			api, _ := apiFor(c.Request.Method, strings.ReplaceAll(c.Request.Path, "{subscriptionId}", DefaultSubscriptionID))
			require.NotEmpty(t, api, "%s: no operation for %s %s", file, c.Request.Method, c.Request.Path)
			covered[api] = append(covered[api], filepath.Base(file))
		}
	}
	var missing []string
	for api, where := range azureTargetCalls(t) {
		if len(covered[api]) == 0 {
			missing = append(missing, api+" (called at "+where[0]+")")
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "SDK operations cloud/azure calls without a contract fixture in testdata/azure/contract")
}
