package builtins_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/transfer"
)

const storagePrelude = `
rg = resource_group("rg", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
dest = blob(sa, container = "vhds", name = "disk.vhd")
`

var diskRef = cloud.BlobRef{Account: "imgflowtest", Container: "vhds", Name: "disk.vhd"}

// uploadSrc uploads path to dest and outputs the result.
func uploadSrc(path, extra string) string {
	return storagePrelude + fmt.Sprintf(`
up = vhd_upload(%q, dest = dest%s)
output("url", up.url)
output("digest", up.digest)
output("md5", up.md5)
output("size", up.size)
`, path, extra)
}

func fileDigest(t *testing.T, s *snippetSandbox, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.ws.Root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	d, err := transfer.SparseDigest(context.Background(), bytes.NewReader(data), int64(len(data)), nil)
	require.NoError(t, err)
	return d
}

func blobState(t *testing.T, p *local.Provider, ref cloud.BlobRef) *local.BlobState {
	t.Helper()
	rg := p.Snapshot().ResourceGroups["rg"]
	require.NotNil(t, rg, "resource group rg")
	sa := rg.StorageAccounts[ref.Account]
	require.NotNil(t, sa, "storage account %s", ref.Account)
	c := sa.Containers[ref.Container]
	require.NotNil(t, c, "container %s", ref.Container)
	b := c.Blobs[ref.Name]
	require.NotNil(t, b, "blob %s", ref.Name)
	return b
}

func TestVHDUploadCreatesThenExists(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("images/disk.vhd", 2, "flatcar")
	want := fileDigest(t, s, "images/disk.vhd")
	require.Regexp(t, "^sparse-sha256:", want)

	first := s.mustRun(uploadSrc("//images/disk.vhd", ""), nil)
	assert.Equal(t, cloud.Created, lastOutcome(t, first, "vhd_upload"))
	out := outputsOf(first)
	assert.Equal(t, "https://imgflowtest.blob.core.windows.net/vhds/disk.vhd", out["url"])
	assert.Equal(t, want, out["digest"])
	assert.Equal(t, "", out["md5"], "the local target keeps no Content-MD5")
	assert.Equal(t, int64(2<<20+512), out["size"])

	b := blobState(t, s.cloud, diskRef)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	assert.Equal(t, want, b.Digest)
	data, err := os.ReadFile(s.cloud.BlobPath(diskRef))
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(s.ws.Root, "images", "disk.vhd"))
	require.NoError(t, err)
	assert.True(t, string(data) == string(src), "the blob holds the file's bytes")

	// A relative path resolves against the calling file.
	second := s.mustRun(uploadSrc("images/disk.vhd", ""), nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, second, "vhd_upload"))
	assert.Equal(t, want, outputsOf(second)["digest"])
	assert.Equal(t, b.Created, blobState(t, s.cloud, diskRef).Created, "the blob was not rewritten")
}

func TestVHDUploadOtherContentNeedsOverwrite(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 1, "first")
	s.mustRun(uploadSrc("disk.vhd", ""), nil)
	firstDigest := blobState(t, s.cloud, diskRef).Digest

	s.fixedVHD("disk.vhd", 1, "second")
	secondDigest := fileDigest(t, s, "disk.vhd")
	require.NotEqual(t, firstDigest, secondDigest)

	msg := s.mustFail(uploadSrc("disk.vhd", ""), nil)
	assert.Contains(t, msg, "already exists with other content")
	assert.Contains(t, msg, "overwrite=True")
	assert.Contains(t, msg, "main.star:6:")
	assert.Equal(t, firstDigest, blobState(t, s.cloud, diskRef).Digest, "the blob is unchanged")

	res := s.mustRun(uploadSrc("disk.vhd", ", overwrite = True"), nil)
	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "vhd_upload"))
	assert.Equal(t, secondDigest, outputsOf(res)["digest"])
	assert.Equal(t, secondDigest, blobState(t, s.cloud, diskRef).Digest)

	// Overwrite with the same content changes nothing.
	res = s.mustRun(uploadSrc("disk.vhd", ", overwrite = True"), nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, res, "vhd_upload"))
}

func TestVHDUploadRefusesFilesThatAreNotFixedVHDs(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("raw.img", strings.Repeat("\x00", 1<<20))
	msg := s.mustFail(uploadSrc("raw.img", ""), nil)
	assert.Contains(t, msg, "vhd_upload raw.img")
	assert.Contains(t, msg, "no VHD footer")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups, "refused before anything was created")

	dynamic, err := os.ReadFile("../testdata/vhd/dynamic-2m.vhd")
	require.NoError(t, err)
	s.write("dynamic.vhd", string(dynamic))
	msg = s.mustFail(uploadSrc("dynamic.vhd", ""), nil)
	assert.Contains(t, msg, "vhd_upload dynamic.vhd")
	assert.Contains(t, strings.ToLower(msg), "dynamic")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestVHDUploadStaysInsideTheWorkspace(t *testing.T) {
	s := newSnippetSandbox(t)
	// A VHD next to the workspace: reachable with ../ but refused.
	outside := filepath.Join(filepath.Dir(s.ws.Root), "x.vhd")
	s.fixedVHD("x.vhd", 1, "")
	data, err := os.ReadFile(filepath.Join(s.ws.Root, "x.vhd"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(outside, data, 0o644))
	t.Cleanup(func() { os.Remove(outside) })

	msg := s.mustFail(uploadSrc("../x.vhd", ""), nil)
	assert.Contains(t, msg, "vhd_upload")
	assert.Contains(t, msg, "outside the workspace")

	msg = s.mustFail(uploadSrc(outside, ""), nil)
	assert.Contains(t, msg, "is absolute")

	msg = s.mustFail(uploadSrc("missing.vhd", ""), nil)
	assert.Contains(t, msg, "vhd_upload")
	assert.Contains(t, msg, "missing.vhd")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

// Uploading the same file to the same blob twice in one run is fine: the
// second call finds identical content. The validation pass must agree with
// the apply pass (a dry-run upload records no data, only the digest;
// without one the second call would look like "other content" there).
func TestVHDUploadTwiceInOneRun(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 1, "flatcar")
	src := storagePrelude + `
a = vhd_upload("disk.vhd", dest = dest)
b = vhd_upload("disk.vhd", dest = dest)
output("same", a.digest == b.digest)
`
	applied := s.execApply(src, nil)
	require.NoError(t, applied.Err, "apply pass alone")
	steps := stepsOf(applied, "vhd_upload")
	require.Len(t, steps, 2)
	assert.Equal(t, cloud.Created, steps[0].Outcome)
	assert.Equal(t, cloud.Exists, steps[1].Outcome)

	fresh := newSnippetSandbox(t)
	fresh.fixedVHD("disk.vhd", 1, "flatcar")
	res := fresh.exec(src, nil)
	require.NoError(t, res.Err, "with the validation pass")
	assert.Equal(t, true, outputsOf(res)["same"])
}

func TestBlobCopyThenRerunExists(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 1, "base")
	src := storagePrelude + `
up = vhd_upload("disk.vhd", dest = dest)
copied = blob_copy(up, dest = blob(sa, container = "copies", name = "base.vhd"))
output("url", copied.url)
output("digest", copied.digest)
`
	first := s.mustRun(src, nil)
	assert.Equal(t, cloud.Created, lastOutcome(t, first, "blob_copy"))
	copyRef := cloud.BlobRef{Account: "imgflowtest", Container: "copies", Name: "base.vhd"}
	assert.Equal(t, "https://imgflowtest.blob.core.windows.net/copies/base.vhd", outputsOf(first)["url"])
	assert.Equal(t, fileDigest(t, s, "disk.vhd"), blobState(t, s.cloud, copyRef).Digest)
	created := blobState(t, s.cloud, copyRef).Created

	second := s.mustRun(src, nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, second, "vhd_upload"))
	assert.Equal(t, cloud.Exists, lastOutcome(t, second, "blob_copy"))
	assert.Equal(t, created, blobState(t, s.cloud, copyRef).Created)

	// The source by URL works as well.
	third := s.mustRun(storagePrelude+`
blob_copy("https://imgflowtest.blob.core.windows.net/vhds/disk.vhd", dest = blob(sa, container = "copies", name = "base.vhd"))
`, nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, third, "blob_copy"))
}

func TestBlobCopyOverOtherContent(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("a.vhd", 1, "a")
	s.fixedVHD("b.vhd", 1, "b")
	s.mustRun(storagePrelude+`
vhd_upload("a.vhd", dest = blob(sa, container = "vhds", name = "a.vhd"))
vhd_upload("b.vhd", dest = blob(sa, container = "vhds", name = "b.vhd"))
blob_copy(blob(sa, container = "vhds", name = "a.vhd"), dest = blob(sa, container = "copies", name = "x.vhd"))
`, nil)
	copyRef := cloud.BlobRef{Account: "imgflowtest", Container: "copies", Name: "x.vhd"}
	require.Equal(t, fileDigest(t, s, "a.vhd"), blobState(t, s.cloud, copyRef).Digest)

	const copyB = storagePrelude + `
blob_copy(blob(sa, container = "vhds", name = "b.vhd"), dest = blob(sa, container = "copies", name = "x.vhd")%s)
`
	msg := s.mustFail(fmt.Sprintf(copyB, ""), nil)
	assert.Contains(t, msg, "already exists with other content")
	assert.Contains(t, msg, "overwrite=True")
	assert.Equal(t, fileDigest(t, s, "a.vhd"), blobState(t, s.cloud, copyRef).Digest)

	res := s.mustRun(fmt.Sprintf(copyB, ", overwrite = True"), nil)
	assert.Equal(t, fileDigest(t, s, "b.vhd"), blobState(t, s.cloud, copyRef).Digest)
	// Replacing an existing blob is an update, as for vhd_upload.
	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "blob_copy"))
}

func TestBlobCopyMissingSource(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(storagePrelude+`
blob_copy(blob(sa, container = "vhds", name = "nothing.vhd"), dest = dest)
`, nil)
	assert.Contains(t, msg, "blob_copy")
	assert.Contains(t, msg, "source")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

// A SAS in a source URL is a secret: it must not reach the recorded calls
// (plan, journal, test results), only its redacted form.
func TestBlobCopySASNeverRecorded(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 1, "base")
	const secret = "sig=TOPSECRETSIGNATURE"
	res := s.mustRun(storagePrelude+`
vhd_upload("disk.vhd", dest = dest)
blob_copy("https://imgflowtest.blob.core.windows.net/vhds/disk.vhd?sv=2022-11-02&`+secret+`", dest = blob(sa, container = "copies", name = "c.vhd"))
`, nil)
	steps := stepsOf(res, "blob_copy")
	require.Len(t, steps, 1)
	step := steps[0]
	assert.NotContains(t, step.Summary, secret)
	assert.NotContains(t, fmt.Sprint(step.Result), secret)
	assert.NotContains(t, fmt.Sprint(step.Args), secret, "the SAS reached the recorded arguments")
}

func TestBlobAndVHDValues(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(storagePrelude+`
b = blob("imgflowtest", container = "vhds", name = "disk.vhd")
output("same", b == dest)
output("url", b.url)
v = vhd(dest, storage_account = sa)
output("vhd_url", v.url)
output("vhd_account", v.storage_account_id)
`, nil)
	out := outputsOf(res)
	assert.Equal(t, true, out["same"])
	assert.Equal(t, "https://imgflowtest.blob.core.windows.net/vhds/disk.vhd", out["url"])
	assert.Equal(t, out["url"], out["vhd_url"])
	assert.True(t, strings.HasSuffix(out["vhd_account"].(string), "/providers/Microsoft.Storage/storageAccounts/imgflowtest"), out["vhd_account"])

	msg := s.mustFail(`blob("Bad_Account", container = "vhds", name = "x.vhd")`, nil)
	assert.Contains(t, msg, "blob:")
	assert.Contains(t, msg, "Bad_Account")

	msg = s.mustFail(storagePrelude+`vhd(dest, storage_account = "not-an-id")`, nil)
	assert.Contains(t, msg, "is not a storage account id")
}

// The same content with its zeros written out instead of left as holes is
// the same content: the rerun finds the blob (the digest does not see the
// difference, and reads only the data ranges).
func TestVHDUploadHolesOrWrittenZerosAreTheSame(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 8, "flatcar")
	first := s.mustRun(uploadSrc("disk.vhd", ""), nil)
	assert.Equal(t, cloud.Created, lastOutcome(t, first, "vhd_upload"))

	path := filepath.Join(s.ws.Root, "disk.vhd")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, data, 0o644)) // dense now
	second := s.mustRun(uploadSrc("disk.vhd", ""), nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, second, "vhd_upload"))
}

// Parallel branches uploading the same file to the same blob: one writes
// it, the others find the same content (also when they looked before it
// existed and lost the race to create it).
func TestVHDUploadSameFileInParallelBranches(t *testing.T) {
	for range 3 {
		s := newSnippetSandbox(t)
		s.fixedVHD("disk.vhd", 16, "flatcar")
		res := s.mustRun(storagePrelude+`
ups = parallel([lambda: vhd_upload("disk.vhd", dest = dest) for _ in range(4)])
output("digests", len(set([u.digest for u in ups])))
`, nil)
		assert.Equal(t, int64(1), outputsOf(res)["digests"])
		created := 0
		for _, st := range stepsOf(res, "vhd_upload") {
			require.NoError(t, st.Err)
			if st.Outcome == cloud.Created {
				created++
			} else {
				assert.Equal(t, cloud.Exists, st.Outcome)
			}
		}
		assert.Equal(t, 1, created)
	}
}
