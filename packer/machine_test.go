package packer

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLine(t *testing.T) {
	l, err := ParseLine("1796207296,,ui,message,    nullb: line%!(PACKER_COMMA) with comma")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(1796207296, 0), l.Timestamp)
	assert.Equal(t, "", l.Target)
	assert.Equal(t, "ui", l.Type)
	assert.Equal(t, []string{"message", "    nullb: line, with comma"}, l.Data)

	l, err = ParseLine("1796207296,fileb,artifact,0,file,0,/tmp/a%!(PACKER_COMMA)b.txt\n")
	require.NoError(t, err)
	assert.Equal(t, "fileb", l.Target)
	assert.Equal(t, []string{"0", "file", "0", "/tmp/a,b.txt"}, l.Data)

	l, err = ParseLine("1796207296,,version-prelease,")
	require.NoError(t, err)
	assert.Equal(t, []string{""}, l.Data)

	for _, bad := range []string{"", "hello", "panic: runtime error, oops", "abc,,ui,say,x", "1,x,"} {
		_, err := ParseLine(bad)
		assert.Error(t, err, bad)
	}
}

func TestUnescape(t *testing.T) {
	assert.Equal(t, "a,b\nc\r\n\td", Unescape(`a%!(PACKER_COMMA)b\nc\r\n`+"\td"))
	assert.Equal(t, "plain", Unescape("plain"))
}

// A failing real packer 1.9.5 run of testdata/packer/null-file.json (the
// null build's shell-local provisioner exits 3), as packer printed it on
// this machine (token=hunter2-secret). Targets are "TYPE.NAME".
const failingRun = `1796289655,,ui,say,==> null.nullb: Running local shell script: /tmp/packer-shell3926246651
1796289655,,ui,say,Build 'file.fileb' finished after 7 milliseconds 972 microseconds.
1796289655,,ui,message,    null.nullb: provisioning nullb%!(PACKER_COMMA) greeting=hello
1796289655,,ui,message,    null.nullb: token=hunter2-secret
1796289655,,ui,say,==> null.nullb: Provisioning step had errors: Running the cleanup provisioner%!(PACKER_COMMA) if present...
1796289655,,ui,error,Build 'null.nullb' errored after 15 milliseconds 249 microseconds: Script exited with non-zero exit status: 3. Allowed exit codes are: [0]
1796289655,,ui,say,\n==> Wait completed after 15 milliseconds 396 microseconds
1796289655,,error-count,1
1796289655,,ui,error,\n==> Some builds didn't complete successfully and had errors:
1796289655,null.nullb,error,Script exited with non-zero exit status: 3. Allowed exit codes are: [0]
1796289655,,ui,error,--> null.nullb: Script exited with non-zero exit status: 3. Allowed exit codes are: [0]
1796289655,,ui,say,\n==> Builds finished. The artifacts of successful builds are:
1796289655,file.fileb,artifact-count,1
1796289655,file.fileb,artifact,0,builder-id,packer.file
1796289655,file.fileb,artifact,0,id,File
1796289655,file.fileb,artifact,0,string,Stored file: /tmp/pk/out.txt
1796289655,file.fileb,artifact,0,files-count,1
1796289655,file.fileb,artifact,0,file,0,/tmp/pk/out.txt
1796289655,file.fileb,artifact,0,end
1796289655,,ui,say,--> file.fileb: Stored file: /tmp/pk/out.txt`

func feed(c *collector, text string) {
	for _, line := range strings.Split(text, "\n") {
		c.handle(line)
	}
}

func TestCollectorFailingRun(t *testing.T) {
	tpl, err := LoadTemplate("../testdata/packer/null-file.json")
	require.NoError(t, err)
	var shown []string
	c := newCollector(func(s string) { shown = append(shown, "[p] "+s) }, newRedactor([]string{"hunter2-secret"}))
	c.names = buildNames(tpl)
	feed(c, failingRun)

	assert.Contains(t, shown, "[p]     null.nullb: provisioning nullb, greeting=hello")
	assert.Contains(t, shown, "[p]     null.nullb: token=<sensitive>", "packer 1.9.5 does not mask sensitive values in machine-readable output")
	assert.Contains(t, shown, "[p] ==> Wait completed after 15 milliseconds 396 microseconds", "leading \\n is dropped")
	assert.Contains(t, shown, "[p] --> null.nullb: Script exited with non-zero exit status: 3. Allowed exit codes are: [0]", "ui errors are shown too")
	for _, s := range shown {
		assert.NotContains(t, s, "PACKER_COMMA")
		assert.NotContains(t, s, `\n`)
	}

	errs := c.errorLines()
	assert.Equal(t, []string{
		"Build 'null.nullb' errored after 15 milliseconds 249 microseconds: Script exited with non-zero exit status: 3. Allowed exit codes are: [0]",
		"==> Some builds didn't complete successfully and had errors:",
		"--> null.nullb: Script exited with non-zero exit status: 3. Allowed exit codes are: [0]",
	}, errs, "the null.nullb error line duplicates the --> ui error and is dropped")

	res := c.result()
	require.Len(t, res.Builds, 2, "builds in order of appearance")
	assert.Equal(t, "nullb", res.Builds[0].Name, "target null.nullb is the template's build nullb")
	assert.Equal(t, []string{"Script exited with non-zero exit status: 3. Allowed exit codes are: [0]"}, res.Builds[0].Errors)
	assert.Empty(t, res.Builds[0].Artifacts)
	assert.Equal(t, "fileb", res.Builds[1].Name)
	assert.Equal(t, []Artifact{{Index: 0, BuilderID: FileBuilderID, ID: "File", String: "Stored file: /tmp/pk/out.txt", Files: []string{"/tmp/pk/out.txt"}}}, res.Builds[1].Artifacts)
}

func TestBuildNames(t *testing.T) {
	tpl, err := ParseTemplate([]byte(`{"builders": [{"type": "null", "communicator": "none"}, {"type": "azure-arm", "name": "sig"}]}`))
	require.NoError(t, err)
	c := newCollector(nil, nil)
	c.names = buildNames(tpl)
	feed(c, "1,null,artifact-count,0\n1,azure-arm.sig,artifact-count,0\n1,other.x,artifact-count,0")
	var names []string
	for _, b := range c.result().Builds {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"null", "sig", "other.x"}, names, "an unnamed builder's target is its type; unknown targets are kept")
}

func TestCollectorMultiLineUIError(t *testing.T) {
	var shown []string
	c := newCollector(func(s string) { shown = append(shown, s) }, nil)
	c.handle("1796210375,,ui,error,Error: \\n\\n1 error occurred:\\n\t* required variable not set: req\\n\\n\\n\\n")
	assert.Equal(t, []string{"Error: ", "", "1 error occurred:", "\t* required variable not set: req"}, shown)
	require.Len(t, c.errorLines(), 1)
	assert.Equal(t, "Error: \n\n1 error occurred:\n\t* required variable not set: req", c.errorLines()[0])

	be := &BuildError{Template: "t.json", ExitCode: 1, Errors: c.errorLines()}
	assert.Equal(t, "packer build t.json failed (exit status 1):\n  Error:\n    1 error occurred:\n    \t* required variable not set: req", be.Error())
}

func TestCollectorUnparsedAndVersion(t *testing.T) {
	var shown []string
	c := newCollector(func(s string) { shown = append(shown, s) }, nil)
	c.handle("panic: something broke")
	c.handle("1796289620,,version,1.9.5")
	c.handle("")
	assert.Equal(t, []string{"panic: something broke"}, shown)
	assert.Equal(t, []string{"panic: something broke"}, c.unparsed)
	assert.Equal(t, "1.9.5", c.version)
}

func TestLineWriter(t *testing.T) {
	var got []string
	w := &lineWriter{fn: func(s string) { got = append(got, s) }}
	for _, chunk := range []string{"a,b", "c\nd\n\ne", "f"} {
		n, err := w.Write([]byte(chunk))
		require.NoError(t, err)
		assert.Equal(t, len(chunk), n)
	}
	assert.Equal(t, []string{"a,bc", "d", ""}, got)
	w.flush()
	assert.Equal(t, []string{"a,bc", "d", "", "ef"}, got)
}

// A gallery-only build (no managed image, the azure plugin v1.4.0 that
// packer 1.9.5 bundles allows it) as its Artifact.String() writes it, in
// a builder named "sig": target azure-arm.sig.
const galleryOnlyRun = `1796290000,azure-arm.sig,artifact-count,1
1796290000,azure-arm.sig,artifact,0,builder-id,Azure.ResourceManagement.VMImage
1796290000,azure-arm.sig,artifact,0,id,
1796290000,azure-arm.sig,artifact,0,string,Azure.ResourceManagement.VMImage:\n\nOSType: Linux\nManagedImageSharedImageGalleryId: /subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/i/versions/1.0.1\nSharedImageGalleryResourceGroup: rg\nSharedImageGalleryName: g\nSharedImageGalleryImageName: i\nSharedImageGalleryImageVersion: 1.0.1\nSharedImageGalleryReplicatedRegions: westeurope%!(PACKER_COMMA) northeurope\n
1796290000,azure-arm.sig,artifact,0,files-count,0
1796290000,azure-arm.sig,artifact,0,end`

func TestCollectorGalleryOnlyArtifact(t *testing.T) {
	tpl, err := ParseTemplate([]byte(`{"builders": [{"type": "azure-arm", "name": "sig"}]}`))
	require.NoError(t, err)
	c := newCollector(nil, nil)
	c.names = buildNames(tpl)
	feed(c, galleryOnlyRun)
	res := c.result()
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "sig", res.Builds[0].Name)
	assert.Equal(t, "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/i/versions/1.0.1", res.GalleryImageVersionID)
	assert.Empty(t, res.ManagedImageID)
	assert.Empty(t, res.ResourceGroup)
	assert.Empty(t, res.OSDiskVHDURL)
	az := res.Builds[0].Artifacts[0].Azure
	require.NotNil(t, az)
	assert.Equal(t, "westeurope, northeurope", az.Extra["SharedImageGalleryReplicatedRegions"])
	assert.Equal(t, "1.0.1", az.Extra["SharedImageGalleryImageVersion"])
}
