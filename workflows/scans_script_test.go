package workflows

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/internal/testtool"
)

// The scripts of lib/scans.star, run in bash against stand-ins of the
// tools they install and call (curl serving a tarball of a fake trivy or
// CIS assessor, ctr listing images): their stdout is the report and
// nothing else, they pass trivy AgentBaker's flags, and they fail only on
// fail_on's findings.

// fakeTrivy stands in for trivy: it logs its arguments, writes a report
// where -o says (else prints a table), and exits with --exit-code when
// FAKE_FINDINGS is set.
const fakeTrivy = `#!/bin/bash
echo "$*" >> "$FAKE_LOG"
if [ "$1" = --version ]; then echo "Version: 0.57.0"; echo "Vulnerability DB: fake"; exit 0; fi
out=; code=0; last=${@: -1}
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift ;; --exit-code) code=$2; shift ;; esac; shift; done
echo "trivy log line" >&2
if [ -n "$out" ]; then printf '{"SchemaVersion": 2, "Results": []}\n' > "$out"; else echo "table of $last"; fi
if [ -n "$FAKE_FINDINGS" ]; then exit "$code"; fi
`

// fakeCurl serves -o FILE URL from $FAKE_TARBALLS: the trivy tarball for
// a trivy release URL, the assessor's otherwise.
const fakeCurl = `#!/bin/bash
echo "curl $*" >> "$FAKE_LOG"
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift ;; http*) url=$1 ;; esac; shift; done
case "$url" in *aquasecurity/trivy/releases*) cp "$FAKE_TARBALLS/trivy.tar.gz" "$out" ;; *) cp "$FAKE_TARBALLS/cis.tar.gz" "$out" ;; esac
`

const fakeCtr = "#!/bin/bash\nprintf 'mcr.microsoft.com/oss/kube-proxy:v1.31.1\\nsha256:0123\\nmcr.microsoft.com/oss/coredns:v1.11.3\\n'\n"

const fakeLaunchCIS = `#!/bin/bash
mkdir -p cisassessor/lib/app/reports
echo "assessing level $LEVEL" >&2
printf 'CIS Ubuntu Linux 22.04 LTS Benchmark, level %s\nPass: 200 Fail: 3\n' "$LEVEL" > cisassessor/lib/app/reports/report-1.txt
echo '<html/>' > cisassessor/lib/app/reports/report-1.html
`

type scanEnv struct {
	t    *testing.T
	bash string
	dir  string
	env  []string
	log  string
}

func newScanEnv(t *testing.T) *scanEnv {
	bash := testtool.Require(t, "bash", "install bash: the scans' scripts run in it")
	tar := testtool.Require(t, "tar", "install tar: the scans unpack their tools with it")
	dir := t.TempDir()
	bin, tarballs, trivyDir := filepath.Join(dir, "bin"), filepath.Join(dir, "tarballs"), filepath.Join(dir, "trivy")
	for _, d := range []string{bin, tarballs, filepath.Join(dir, "src", "cisassessor")} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	write := func(path, text string) {
		require.NoError(t, os.WriteFile(path, []byte(text), 0o755))
	}
	write(filepath.Join(bin, "curl"), fakeCurl)
	write(filepath.Join(bin, "ctr"), fakeCtr)
	write(filepath.Join(bin, "systemctl"), "#!/bin/bash\nexit 0\n")
	write(filepath.Join(dir, "src", "trivy"), fakeTrivy)
	write(filepath.Join(dir, "src", "cisassessor", "launch-cis.sh"), fakeLaunchCIS)
	for name, content := range map[string]string{"trivy.tar.gz": "trivy", "cis.tar.gz": "cisassessor"} {
		out, err := exec.Command(tar, "-czf", filepath.Join(tarballs, name), "-C", filepath.Join(dir, "src"), content).CombinedOutput()
		require.NoError(t, err, string(out))
	}
	log := filepath.Join(dir, "log")
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_LOG="+log, "FAKE_TARBALLS="+tarballs, "IMGFLOW_TRIVY_DIR="+trivyDir)
	return &scanEnv{t: t, bash: bash, dir: dir, env: env, log: log}
}

// run runs a scan's script; it returns stdout, stderr and the exit code.
func (e *scanEnv) run(script string, extraEnv ...string) (string, string, int) {
	cmd := exec.Command(e.bash, "-c", script)
	cmd.Dir = e.dir
	cmd.Env = append(append([]string(nil), e.env...), extraEnv...)
	var stdout, stderr writerString
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(e.t, err)
	}
	return stdout.String(), stderr.String(), code
}

func (e *scanEnv) logged() string {
	data, err := os.ReadFile(e.log)
	require.NoError(e.t, err)
	return string(data)
}

// scanScript calls a scans.star function and returns its script, after
// checking the simulated form it carries.
func scanScript(t *testing.T, fn string, kwargs ...starlark.Tuple) string {
	t.Helper()
	v, err := starlark.Call(&starlark.Thread{}, loadLib(t, "scans.star")[fn], nil, kwargs)
	require.NoError(t, err)
	s, _ := v.(*starlarkstruct.Struct).Attr("script")
	script := string(s.(starlark.String))
	scan, err := guest.GuestScanFromScript(script)
	require.NoError(t, err)
	require.NotNil(t, scan, "the script carries its simulated form")
	return script
}

func kw(name string, v starlark.Value) starlark.Tuple {
	return starlark.Tuple{starlark.String(name), v}
}

func TestTrivyScanScript(t *testing.T) {
	e := newScanEnv(t)
	script := scanScript(t, "trivy_scan")
	stdout, stderr, code := e.run(script)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "{\"SchemaVersion\": 2, \"Results\": []}\n", stdout, "stdout is the report and nothing else")
	assert.Contains(t, stderr, "trivy log line", "trivy's logs go to stderr")
	log := e.logged()
	assert.Regexp(t, `curl -fsSL --retry 5 -o trivy.tar.gz https://github.com/aquasecurity/trivy/releases/download/v0\.57\.0/trivy_0\.57\.0_Linux-(64bit|ARM64)\.tar\.gz`, log)
	assert.Contains(t, log, "rootfs --scanners vuln --ignore-unfixed --skip-dirs /var/lib/containerd --severity HIGH,CRITICAL -f json -o report.json /")
	assert.NotContains(t, log, "--exit-code", "no fail_on: findings fail nothing")

	// Installed once: a second scan reuses the binary.
	_, _, code = e.run(script, "FAKE_FINDINGS=1")
	assert.Equal(t, 0, code, "findings without fail_on pass")
	assert.Equal(t, 1, strings.Count(e.logged(), "curl "), "trivy 0.57.0 is already installed")
}

func TestTrivyScanScriptFailOn(t *testing.T) {
	e := newScanEnv(t)
	script := scanScript(t, "trivy_scan", kw("fail_on", starlark.String("CRITICAL")))
	stdout, _, code := e.run(script)
	assert.Equal(t, 0, code, "no finding")
	assert.Equal(t, "{\"SchemaVersion\": 2, \"Results\": []}\n", stdout)
	assert.Contains(t, e.logged(), "rootfs --scanners vuln --ignore-unfixed --skip-dirs /var/lib/containerd --skip-db-update --severity CRITICAL --exit-code 1 -q -f table /")
	stdout, _, code = e.run(script, "FAKE_FINDINGS=1")
	assert.Equal(t, 1, code, "a CRITICAL finding fails the scan")
	assert.Equal(t, "{\"SchemaVersion\": 2, \"Results\": []}\n", stdout, "the report is printed all the same")
}

func TestTrivyImagesScript(t *testing.T) {
	e := newScanEnv(t)
	stdout, stderr, code := e.run(scanScript(t, "trivy_images"))
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, guest.TrivyImagesHeader+
		"table of mcr.microsoft.com/oss/kube-proxy:v1.31.1\ntable of mcr.microsoft.com/oss/coredns:v1.11.3\n", stdout,
		"AgentBaker's header, then one table per cached image (not the sha256 ids)")
	assert.Contains(t, e.logged(), "image --scanners vuln --ignore-unfixed --severity HIGH,CRITICAL -f table mcr.microsoft.com/oss/coredns:v1.11.3")

	_, _, code = e.run(scanScript(t, "trivy_images", kw("fail_on", starlark.String("HIGH"))), "FAKE_FINDINGS=1")
	assert.Equal(t, 1, code, "fail_on: an image with a HIGH finding fails the scan")
}

func TestCISReportScript(t *testing.T) {
	e := newScanEnv(t)
	assessor := "https://example.invalid/cisassessor.tar.gz?sv=2026-12-06&sig=s3cret"
	args := []starlark.Tuple{kw("assessor", starlark.String(assessor)), kw("level", starlark.MakeInt(2))}
	script := scanScript(t, "cis_report", args...)
	assert.NotContains(t, script, "example.invalid", "the assessor's URL is not in the script's text")
	v, err := starlark.Call(&starlark.Thread{}, loadLib(t, "scans.star")["cis_report"], nil, args)
	require.NoError(t, err)
	envVal, err := v.(*starlarkstruct.Struct).Attr("secret_env")
	require.NoError(t, err)
	env := envVal.(*starlark.Dict)
	url, found, _ := env.Get(starlark.String("IMGFLOW_CIS_ASSESSOR"))
	require.True(t, found, "the URL rides in the scan's secret environment")
	require.Equal(t, starlark.String(assessor), url)

	stdout, stderr, code := e.run(script, "IMGFLOW_CIS_ASSESSOR="+assessor)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "CIS Ubuntu Linux 22.04 LTS Benchmark, level 2\nPass: 200 Fail: 3\n", stdout, "the assessor's latest text report")
	assert.Contains(t, stderr, "assessing level 2")
	assert.Contains(t, e.logged(), "curl -fsSL --retry 5 -o cisassessor.tar.gz "+assessor, "the script downloads from its environment")

	_, err = starlark.Call(&starlark.Thread{}, loadLib(t, "scans.star")["cis_report"], nil, []starlark.Tuple{kw("assessor", starlark.String("x")), kw("level", starlark.MakeInt(3))})
	assert.ErrorContains(t, err, "level 3: use 1 or 2")
}
