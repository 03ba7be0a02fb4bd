package builtins_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/vhd"
)

// TestCheckOutputsCleanup runs the cleanup test_vm registers for a scan's
// output blobs as imgflow gc runs it from a journal: it deletes the blobs
// left by a run that died between the scan and their reading (one already
// gone is fine), and refuses any container but imgflow-testvm.
func TestCheckOutputsCleanup(t *testing.T) {
	s := newSnippetSandbox(t)
	ctx := context.Background()
	s.mustRun(`storage_account("reports", resource_group = resource_group("rg", location = "westeurope"))`, nil)
	require.NoError(t, s.cloud.EnsureContainer(ctx, "reports", builtins.ReportContainer))
	left := cloud.BlobRef{Account: "reports", Container: builtins.ReportContainer, Name: "testvm-1/trivy.stdout"}
	_, err := s.cloud.UploadPageBlob(ctx, left, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 512)), Size: 512, Ranges: []vhd.Range{{Offset: 0, Length: 512}}}, false)
	require.NoError(t, err)

	reg := builtins.NewRegistry()
	cleanup := journal.Cleanup{Kind: "delete_check_outputs", Args: map[string]any{
		"account": "reports", "container": builtins.ReportContainer, "blobs": []any{"testvm-1/trivy.stdout", "testvm-1/trivy.stderr"},
	}}
	require.NoError(t, reg.RunCleanup(ctx, s.cloud, cleanup))
	_, err = s.cloud.GetBlob(ctx, left)
	assert.True(t, cloud.IsNotFound(err), "the left blob is deleted: %v", err)
	require.NoError(t, reg.RunCleanup(ctx, s.cloud, cleanup), "again: nothing left to delete is fine")

	cleanup.Args["container"] = "vhds"
	err = reg.RunCleanup(ctx, s.cloud, cleanup)
	assert.ErrorContains(t, err, `refusing to delete blobs in container "vhds"`)
}
