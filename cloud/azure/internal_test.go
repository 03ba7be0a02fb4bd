package azure

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/vhd"
)

func response(status int, header http.Header, body string) *http.Response {
	if header == nil {
		header = http.Header{}
	}
	req, _ := http.NewRequest(http.MethodGet, "https://management.azure.com/x?sig=secret", nil)
	return &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(strings.NewReader(body)), Request: req}
}

func TestAzErr(t *testing.T) {
	arm := runtime.NewResponseError(response(409, nil,
		`{"error":{"code":"PropertyChangeNotAllowed","message":"Changing property 'osState' is not allowed.","details":[{"code":"x","message":"Also this."}]}}`))
	err := azErr(arm, "/subscriptions/s/resourceGroups/rg")
	ce := cloudtest.RequireError(t, err, 409, "PropertyChangeNotAllowed")
	assert.Equal(t, "Changing property 'osState' is not allowed. Also this.", ce.Message)

	h := http.Header{}
	h.Set("x-ms-error-code", "AuthenticationFailed")
	storage := runtime.NewResponseError(response(403, h,
		"<?xml version=\"1.0\"?><Error><Code>AuthenticationFailed</Code><Message>Signature did not match. sig=abc\nRequestId:1</Message></Error>"))
	err = azErr(storage, "https://a/c/b?sig=zzz")
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "AuthenticationFailed", ce.Code)
	assert.Equal(t, "Signature did not match. sig=<redacted>", ce.Message)
	assert.Equal(t, "https://a/c/b?<redacted>", ce.Resource)

	// A failed long operation: its status poll answered 200.
	lro := runtime.NewResponseError(response(200, nil, `{"status":"Failed","error":{"code":"ReplicationFailed","message":"Quota."}}`))
	err = azErr(lro, "v")
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, http.StatusInternalServerError, ce.StatusCode)
	assert.Equal(t, "ReplicationFailed", ce.Code)
	assert.Equal(t, "Quota.", ce.Message)

	// A 404 HEAD answer without a code.
	var re *azcore.ResponseError
	head := runtime.NewResponseError(response(404, nil, ""))
	require.ErrorAs(t, head, &re)
	err = blobErr(head, "https://a/c/b")
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "%v", err)
}

func TestPageRanges(t *testing.T) {
	rs, err := pageRanges(cloud.PageSource{Reader: strings.NewReader(""), Size: 8192, Ranges: []vhd.Range{
		{Offset: 4000, Length: 100}, {Offset: 10, Length: 5}, {Offset: 500, Length: 20}, {Offset: 7680, Length: 0},
	}}, "u")
	require.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: 0, Length: 1024}, {Offset: 3584, Length: 1024}}, rs, "widened to pages, merged")
	_, err = pageRanges(cloud.PageSource{Reader: strings.NewReader(""), Size: 1024, Ranges: []vhd.Range{{Offset: 1000, Length: 100}}}, "u")
	assert.True(t, cloud.HasCode(err, cloud.CodeInvalidParameter))
	rs, err = pageRanges(cloud.PageSource{Reader: strings.NewReader(""), Size: 1024}, "u")
	require.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: 0, Length: 1024}}, rs)

}

func TestCopyProgress(t *testing.T) {
	copied, total, ok := copyProgress("512/2048")
	assert.True(t, ok)
	assert.Equal(t, int64(512), copied)
	assert.Equal(t, int64(2048), total)
	_, _, ok = copyProgress("")
	assert.False(t, ok)
}

func TestRetriable(t *testing.T) {
	for err, want := range map[error]bool{
		errors.New("connection reset"):                     true,
		io.ErrUnexpectedEOF:                                true,
		&cloud.Error{StatusCode: 503}:                      true,
		&cloud.Error{StatusCode: 429}:                      true,
		&cloud.Error{StatusCode: 501}:                      false,
		&cloud.Error{StatusCode: 403}:                      false,
		&cloud.Error{StatusCode: 404}:                      false,
		permanentError{io.ErrUnexpectedEOF}:                false,
		&cloud.Error{StatusCode: 400, Code: "Md5Mismatch"}: true,
		context.Canceled:                                   false,
	} {
		assert.Equal(t, want, retriable(err), "%v", err)
	}
}

func TestWithRetryDefaults(t *testing.T) {
	o := withRetryDefaults(nil)
	assert.Equal(t, int32(DefaultMaxRetries), o.Retry.MaxRetries)
	assert.Equal(t, DefaultRetryDelay, o.Retry.RetryDelay)
	assert.Greater(t, o.Retry.MaxRetryDelay.Seconds(), 120.0, "gallery APIs ask for 120 s")
}

func TestGrantDuration(t *testing.T) {
	const gib = int64(1) << 30
	assert.Equal(t, time.Hour, grantDuration(time.Hour, 1*gib), "a small disk: what was asked")
	// 100 GiB at 20 MiB/s is 5120 s, plus 30 min.
	assert.Equal(t, 5120*time.Second+30*time.Minute, grantDuration(time.Hour, 100*gib))
	assert.Equal(t, maxGrantDuration, grantDuration(time.Hour, 8<<40), "capped")
	assert.Equal(t, grantMargin, grantDuration(0, 0), "nothing asked: the margin")
}

// Each Windows test VM gets a fresh admin password Azure accepts, and a
// computer name within Windows' 15 characters.
func TestWindowsVMPasswordsAreFreshAndAccepted(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		pw, err := windowsPassword()
		require.NoError(t, err)
		require.NoError(t, azrules.CheckVMOSProfile("vm", cloud.OSTypeWindows, windowsComputerName("testvm-0123456789"), pw, false, true), "password %d", len(seen))
		assert.False(t, seen[pw], "a password came twice")
		seen[pw] = true
	}
	assert.Equal(t, "stvm-0123456789", windowsComputerName("testvm-0123456789"))
	body, err := vmBody(cloud.VM{Name: "testvm-0123456789", ImageID: "img", Size: "Standard_D2s_v3", OSType: cloud.OSTypeWindows}, "eastus", "subnet")
	require.NoError(t, err)
	op := body.Properties.OSProfile
	assert.Nil(t, op.LinuxConfiguration)
	require.NotNil(t, op.WindowsConfiguration)
	assert.True(t, *op.WindowsConfiguration.ProvisionVMAgent)
	assert.NotEmpty(t, *op.AdminPassword)
}

// TestConfidentialDisksAreStandardSSD: a ConfidentialVM test VM's OS disk
// and a ConfidentialVM disk are Standard SSD, as in the REST spec's
// confidential VM example; others stay Standard HDD.
func TestConfidentialDisksAreStandardSSD(t *testing.T) {
	for st, want := range map[string]string{"": "Standard_LRS", SecurityTrustedLaunch: "Standard_LRS", SecurityConfidentialVM: "StandardSSD_LRS"} {
		assert.Equal(t, want, diskSKUFor(st), st)
		body, err := vmBody(cloud.VM{Name: "vm", Size: "Standard_DC2as_v5", ImageID: "/img", SecurityType: st}, "westeurope", "/subnet")
		require.NoError(t, err)
		assert.Equal(t, want, string(*body.Properties.StorageProfile.OSDisk.ManagedDisk.StorageAccountType), st)
	}
}
