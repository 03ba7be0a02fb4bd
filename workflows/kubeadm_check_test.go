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

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/internal/testtool"
)

// TestKubeadmDryRunScriptAgreesWithTheLocalEvaluation runs the script of
// checks.kubeadm_dry_run with a stand-in kubeadm on PATH (it records its
// arguments and exits as told) and compares its verdict with the local
// evaluation of an image whose content passes or fails kubeadm's checks.
func TestKubeadmDryRunScriptAgreesWithTheLocalEvaluation(t *testing.T) {
	bash := testtool.Require(t, "bash", "install bash: the checks' scripts run in it")
	checks := loadLib(t, "checks.star")
	v, err := starlark.Call(&starlark.Thread{}, checks["kubeadm_dry_run"], starlark.Tuple{starlark.String("v1.33.1")}, nil)
	require.NoError(t, err)
	chk, err := starlark.Call(&starlark.Thread{}, checks["check"], starlark.Tuple{starlark.String("kubeadm-dry-run"), v}, nil)
	require.NoError(t, err)
	scriptV, _ := chk.(*starlarkstruct.Struct).Attr("script")
	script := string(scriptV.(starlark.String))
	local, err := guest.GuestChecksFromScript(script)
	require.NoError(t, err)
	require.Equal(t, []cloud.GuestCheck{{Kind: cloud.GuestKubeadmDryRun, Version: "1.33.1"}}, local, "the version travels without its v")

	// Tools the script uses besides kubeadm, for a PATH without kubeadm.
	tools := t.TempDir()
	for _, tool := range []string{"tail", "sed"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(tools, tool)))
	}
	image := func(kubeadm, kubelet string) *guest.GuestContent {
		return &guest.GuestContent{Files: map[string]guest.GuestFile{"/etc/systemd/system/containerd.service": {Mode: "0600"}},
			Packages: map[string]string{"kubeadm": kubeadm, "kubelet": kubelet, "containerd": "2.1.4"}}
	}
	noKubeadm := image("", "1.33.1")
	delete(noKubeadm.Packages, "kubeadm")

	for _, tc := range []struct {
		name  string
		fake  string // the stand-in kubeadm's body; "" for none on PATH
		guest *guest.GuestContent
	}{
		{"passes", "echo '[dryrun] Would write file /etc/kubernetes/manifests/kube-apiserver.yaml'; exit 0", image("1.33.1", "1.33.1")},
		{"preflight-fails", "echo '[preflight] Running pre-flight checks'; echo '[ERROR KubeletVersion]: the kubelet version is higher than the control plane version.' >&2; exit 1",
			image("1.34.0", "1.34.0")},
		{"no-kubeadm", "", noKubeadm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := t.TempDir()
			argsFile := filepath.Join(bin, "args")
			if tc.fake != "" {
				require.NoError(t, os.WriteFile(filepath.Join(bin, "kubeadm"), []byte("#!"+bash+"\necho \"$@\" > "+argsFile+"\n"+tc.fake+"\n"), 0o755))
			}
			want := guest.SimulateRunCommand(local, tc.guest, 1<<30)
			cmd := exec.Command(bash, "-c", script)
			cmd.Env = []string{"PATH=" + bin + ":" + tools}
			var stdout, stderr writerString
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, want.ExitCode, code, "exit code\n%s", script)
			assert.Equal(t, want.Output, stdout.String(), "stdout")
			gotFirst, gotRest, _ := strings.Cut(stderr.String(), "\n")
			wantFirst, wantRest, _ := strings.Cut(want.Error, "\n")
			assert.Equal(t, wantFirst, gotFirst, "the verdict line of stderr")
			if tc.fake == "" {
				assert.Contains(t, gotRest, "kubeadm: command not found")
				assert.Contains(t, wantRest, "kubeadm: command not found")
				return
			}
			args, err := os.ReadFile(argsFile)
			require.NoError(t, err)
			assert.Equal(t, "init --dry-run --kubernetes-version v1.33.1\n", string(args), "as image-builder's smoke test runs it, no preflight error ignored")
			if code != 0 {
				assert.Equal(t, "  exit code 1, last lines:\n  [preflight] Running pre-flight checks\n  [ERROR KubeletVersion]: the kubelet version is higher than the control plane version.\n", gotRest)
				assert.Contains(t, wantRest, "[ERROR KubeletVersion]: the kubelet version is higher than the control plane version.")
			}
		})
	}
}

func TestKubeadmDryRunRefusesAVersionItCannotPass(t *testing.T) {
	checks := loadLib(t, "checks.star")
	_, err := starlark.Call(&starlark.Thread{}, checks["kubeadm_dry_run"], starlark.Tuple{starlark.String("1.33")}, nil)
	assert.ErrorContains(t, err, `kubeadm_dry_run: Kubernetes version "1.33": want major.minor.patch, e.g. 1.33.1`)
}
