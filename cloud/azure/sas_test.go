package azure_test

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	azlog "github.com/Azure/azure-sdk-for-go/sdk/azcore/log"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// sdkSig matches a signature the SDK's own logging did not redact.
var sdkSig = regexp.MustCompile(`(?i)sig=([^&\s"']*)`)

// TestNoSASInErrorsOrLogs runs a disk export and its failure modes and
// scans every error, log line, progress report and resume token the
// provider produced, and every line the SDK logged, for a SAS signature.
func TestNoSASInErrorsOrLogs(t *testing.T) {
	var mu sync.Mutex
	var texts []string // ours: must not contain "sig=" at all
	var sdk []string   // the SDK's: only sig=REDACTED
	add := func(s ...string) {
		mu.Lock()
		defer mu.Unlock()
		texts = append(texts, s...)
	}
	azlog.SetListener(func(_ azlog.Event, msg string) {
		mu.Lock()
		defer mu.Unlock()
		sdk = append(sdk, msg)
	})
	defer azlog.SetListener(nil)

	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.CopyMode = azure.CopyRanges // 501 from Azurite: fallback logged
		o.Progress = func(op string, pct int) { add(fmt.Sprintf("progress %s %d", op, pct)) }
		o.OnPoller = func(op, tok string) { add("poller "+op, tok) }
		o.Log = func(msg string) { add("log " + msg) }
	})
	sa, c := w.base("imgflowtest")
	v, img := w.version(sa, c)
	_, err := w.p.CreateDiskFromImageVersion(w.ctx, cloud.Disk{Name: "export", ResourceGroup: "rg", SourceImageVersionID: v.ID})
	require.NoError(t, err)
	sas, err := w.p.GrantDiskAccess(w.ctx, "rg", "export", time.Hour)
	require.NoError(t, err)
	u, err := url.Parse(sas)
	require.NoError(t, err)
	sig := u.Query().Get("sig")
	require.NotEmpty(t, sig)

	errs := map[string]error{}
	// Into a container that does not exist.
	_, errs["missing container"] = w.p.CopyBlob(w.ctx, sas, ref(sa, "nocontainer", "x.vhd"), false)
	// With a tampered signature.
	q := u.Query()
	q.Set("sig", "dGFtcGVyZWQ"+sig[11:])
	bad := *u
	bad.RawQuery = q.Encode()
	_, errs["tampered"] = w.p.CopyBlob(w.ctx, bad.String(), ref(sa, c, "tampered.vhd"), false)
	// A good copy, then again onto it.
	dest := ref(sa, c, "export.vhd")
	b, err := w.p.CopyBlob(w.ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, int64(len(img.content)), b.Size)
	_, errs["exists"] = w.p.CopyBlob(w.ctx, sas, dest, false)
	// After revoke the SAS is refused.
	require.NoError(t, w.p.RevokeDiskAccess(w.ctx, "rg", "export"))
	_, errs["revoked"] = w.p.CopyBlob(w.ctx, sas, ref(sa, c, "late.vhd"), false)
	// An unreachable host: the transport error quotes the URL.
	_, errs["unreachable"] = w.p.CopyBlob(w.ctx, "http://127.0.0.1:1/devstoreaccount1/c/disk.vhd?"+u.RawQuery, ref(sa, c, "far.vhd"), false)
	// A grant on a disk that does not exist.
	_, errs["no disk"] = w.p.GrantDiskAccess(w.ctx, "rg", "nodisk", time.Hour)
	// Reading through a SAS-carrying blob reference.
	_, errs["read"] = w.p.ReadBlob(w.ctx, cloud.BlobRef{Account: "devstoreaccount1", Container: "c", Name: "x?" + u.RawQuery, Endpoint: "http://127.0.0.1:1/devstoreaccount1"}, 0, 10)

	for name, err := range errs {
		require.Error(t, err, name)
		add("error " + name + ": " + err.Error())
	}
	add(w.logLines()...)

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, sdk, "the SDK logged nothing: the listener is not wired")
	for _, s := range texts {
		assert.NotContains(t, strings.ToLower(s), "sig=", "SAS leaked: %s", s)
		assert.NotContains(t, s, sig, "signature leaked: %s", s)
		assert.NotContains(t, s, url.QueryEscape(sig), "signature leaked: %s", s)
	}
	for _, s := range sdk {
		assert.NotContains(t, s, sig, "signature leaked in SDK log: %s", s)
		for _, m := range sdkSig.FindAllStringSubmatch(s, -1) {
			assert.Equal(t, "REDACTED", m[1], "SDK log shows a signature: %s", s)
		}
	}
	// The errors still say what failed.
	assert.Contains(t, errs["revoked"].Error(), "copy blob")
	assert.Contains(t, errs["revoked"].Error(), "?<redacted>")
	assert.True(t, cloud.HasCode(errs["exists"], cloud.CodeBlobAlreadyExists))
}
