//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/internal/testtool"
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
		testtool.Unavailable(t, "azurite is not available: "+err.Error(), "`make deps` installs it")
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
	timeout := time.After(3 * time.Minute) // Azurite may take its 2 minutes on a busy machine
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
			t.Fatal("the emulator was not ready within 3 minutes")
		}
	}
}

// TestEmulator starts the emulator, runs a small workflow with `imgflow
// run --target azure` against it (a VHD upload, a gallery and an image
// version from the VHD), then stops it with SIGINT: it exits and no
// Azurite process is left.
func TestEmulator(t *testing.T) {
	// `imgflow run --target azure`, the CLI as users run it: built while
	// the emulator starts Azurite.
	bin := filepath.Join(t.TempDir(), "imgflow")
	type result struct {
		out []byte
		err error
	}
	built := make(chan result, 1)
	go func() {
		out, err := exec.Command("go", "build", "-o", bin, "github.com/imgflow/imgflow/cmd/imgflow").CombinedOutput()
		built <- result{out, err}
	}()
	t.Cleanup(func() { <-built }) // the build ends before its directory goes
	cmd, env, azPID := startEmulator(t, "--accounts", "imgflowtest")
	for _, k := range []string{azure.EnvARMEndpoint, azure.EnvBlobEndpoint, azure.EnvStorageKey, azure.EnvSubscription} {
		require.NotEmpty(t, env[k], k)
	}
	require.Positive(t, azPID)
	for k, v := range env {
		t.Setenv(k, v)
	}

	b := <-built
	built <- b // for the cleanup
	require.NoError(t, b.err, "build imgflow: %s", b.out)
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, bin, "run", "--target", "azure", "--root", root, "--state", t.TempDir(),
		"--outputs", outputs, filepath.Join(root, "cmd", "imgflow-emulator", "testdata", "small.star"))
	out, err := run.CombinedOutput()
	require.NoError(t, err, "imgflow run --target azure: %s", out)
	data, err := os.ReadFile(outputs)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(data, &got))
	assert.Contains(t, got["version"], "/galleries/emulator_gallery/images/small/versions/1.0.0")

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

// TestBackgroundStart: --background returns once the emulator is ready,
// printing the environment and the pid to kill; the ARM endpoint answers
// right away (no file to wait for, none stale to read), and killing the
// pid stops the emulator and its Azurite.
func TestBackgroundStart(t *testing.T) {
	if _, err := azuritetest.FindScript(); err != nil {
		testtool.Unavailable(t, "azurite is not available: "+err.Error(), "`make deps` installs it")
	}
	cmd := exec.Command(os.Args[0], "--background", "--accounts", "imgflowtest")
	cmd.Env = append(os.Environ(), envChild+"=1")
	out, err := cmd.Output()
	require.NoError(t, err, "the background start returns once ready")
	env := map[string]string{}
	azPID := 0
	for _, line := range strings.Split(string(out), "\n") {
		if kv, ok := strings.CutPrefix(line, "export "); ok {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		if rest, ok := strings.CutPrefix(line, "# azurite pid "); ok {
			azPID, _ = strconv.Atoi(strings.Fields(rest)[0])
		}
	}
	pid, err := strconv.Atoi(env[EnvEmulatorPID])
	require.NoError(t, err, "output:\n%s", out)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	require.NotEmpty(t, env[azure.EnvARMEndpoint])
	resp, err := http.Get(env[azure.EnvARMEndpoint] + "/subscriptions/" + env[azure.EnvSubscription] + "?api-version=2022-12-01")
	require.NoError(t, err, "the fake ARM answers as soon as the start returned")
	_ = resp.Body.Close()

	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	gone := func(p int) bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		return err != nil || strings.Contains(string(stat), ") Z ") // exited, maybe not yet reaped by init
	}
	require.Eventually(t, func() bool { return gone(pid) }, 30*time.Second, 100*time.Millisecond, "the emulator stops on SIGTERM")
	if azPID > 0 {
		assert.Eventually(t, func() bool { return gone(azPID) }, 30*time.Second, 100*time.Millisecond, "its Azurite stops too")
	}
}
