//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
)

// envChild makes the test binary run the emulator's main instead of the
// tests, so the test can start it as a process and signal it.
const envChild = "IMGFLOW_EMULATOR_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// startEmulator runs the emulator as a process and reads the environment
// it prints, up to its "ready" line.
func startEmulator(t *testing.T, args ...string) (*exec.Cmd, map[string]string, int) {
	t.Helper()
	if _, err := azuritetest.FindScript(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("azurite is required when CI=true: %v", err)
		}
		t.Skipf("azurite not available, skipping: %v", err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envChild+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	env := map[string]string{}
	pid := 0
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the emulator exited before it was ready")
			if kv, ok := strings.CutPrefix(line, "export "); ok {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
			if rest, ok := strings.CutPrefix(line, "# azurite pid "); ok {
				pid, err = strconv.Atoi(strings.Fields(rest)[0])
				require.NoError(t, err)
			}
			if strings.HasPrefix(line, "# ready") {
				go func() {
					for range lines { //nolint:revive // drain
					}
				}()
				return cmd, env, pid
			}
		case <-timeout:
			t.Fatal("the emulator was not ready within a minute")
		}
	}
}

// TestEmulator starts the emulator, runs a small workflow on the Azure
// target against it (a VHD upload, a gallery and an image version from
// the VHD), then stops it with SIGINT: it exits and no Azurite process
// is left.
func TestEmulator(t *testing.T) {
	cmd, env, azPID := startEmulator(t, "--accounts", "imgflowtest")
	for _, k := range []string{azure.EnvARMEndpoint, azure.EnvBlobEndpoint, azure.EnvStorageKey, azure.EnvSubscription} {
		require.NotEmpty(t, env[k], k)
	}
	require.Positive(t, azPID)
	for k, v := range env {
		t.Setenv(k, v)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	ws, err := builtins.NewWorkspace("../..")
	require.NoError(t, err)
	res := interp.Run(ctx, "//cmd/imgflow-emulator/testdata/small.star", interp.Config{Workspace: ws, Registry: builtins.NewRegistry(),
		Info: builtins.RunInfo{ID: "emulator-test", Time: time.Now()}}, interp.Target{Apply: p, Validate: overlay.New(p)})
	require.NoError(t, res.Err)
	outputs := map[string]any{}
	for _, o := range res.Outputs {
		outputs[o.Name] = o.Value
	}
	assert.Contains(t, outputs["version"], "/galleries/emulator_gallery/images/small/versions/1.0.0")

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "the emulator exits cleanly on SIGINT")
	case <-time.After(30 * time.Second):
		t.Fatal("the emulator did not exit within 30 s of SIGINT")
	}
	assert.True(t, errors.Is(syscall.Kill(azPID, 0), syscall.ESRCH), "azurite (pid %d) is gone", azPID)
	assert.True(t, errors.Is(syscall.Kill(-azPID, 0), syscall.ESRCH), "its process group is gone")
}
