package azure_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/guest"
)

// runCommandBodies records the bodies of run-command PUTs the provider
// sends.
type runCommandBodies struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *runCommandBodies) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method == http.MethodPut && strings.Contains(raw.URL.Path, "/runCommands/") && raw.Body != nil {
		data, err := io.ReadAll(raw.Body)
		if err != nil {
			return nil, err
		}
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.bodies = append(r.bodies, data)
		r.mu.Unlock()
	}
	return req.Next()
}

// TestRunCommandSecretEnvIsProtected: a run command's secret environment
// goes to Azure as protectedParameters, not in the script (that ARM never
// answers them is the fake's contract: testdata/azure/contract/vm/13a).
func TestRunCommandSecretEnvIsProtected(t *testing.T) {
	rec := &runCommandBodies{}
	w := newWorld(t, fakearm.Options{LROPolls: 1}, func(o *azure.Options) {
		o.ARM.PerCallPolicies = append(o.ARM.PerCallPolicies, rec)
	})
	sa, c := w.base("imgflowtest")
	v := w.guestVersion(sa, c, &guest.GuestContent{Files: map[string]guest.GuestFile{}, UsedBytes: 1 << 20})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-4", Location: loc})
	require.NoError(t, err)
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm4", ResourceGroup: "imgflow-testvm-4", Size: "Standard_D2ds_v5", ImageID: v.ID})
	require.NoError(t, err)

	url := "https://assessors.blob.core.windows.net/cis/cisassessor.tar.gz?sv=2026-12-06&sig=s3cret"
	_, err = w.p.RunCommand(w.ctx, "imgflow-testvm-4", "vm4", cloud.RunCommand{Name: "cis", Timeout: time.Minute,
		Script: "#!/bin/bash\ncurl -fsSL -o a.tgz \"$IMGFLOW_CIS_ASSESSOR\"\n", SecretEnv: map[string]string{"IMGFLOW_CIS_ASSESSOR": url, "B": "b"}})
	require.NoError(t, err)

	rec.mu.Lock()
	require.Len(t, rec.bodies, 1)
	body := rec.bodies[0]
	rec.mu.Unlock()
	var sent armcompute.VirtualMachineRunCommand
	require.NoError(t, json.Unmarshal(body, &sent))
	require.NotNil(t, sent.Properties)
	require.Len(t, sent.Properties.ProtectedParameters, 2)
	assert.Equal(t, "B", *sent.Properties.ProtectedParameters[0].Name, "in name order")
	assert.Equal(t, "IMGFLOW_CIS_ASSESSOR", *sent.Properties.ProtectedParameters[1].Name)
	assert.Equal(t, url, *sent.Properties.ProtectedParameters[1].Value)
	assert.Empty(t, sent.Properties.Parameters, "nothing in the plain parameters, which ARM answers")
}
