//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// readyTimeout bounds the wait for a background emulator: Azurite may take
// its 2 minutes on a busy machine.
const readyTimeout = 3 * time.Minute

// EnvEmulatorPID is the variable a background start exports: the pid to
// kill to stop the emulator (and its Azurite).
const EnvEmulatorPID = "IMGFLOW_EMULATOR_PID"

// startInBackground starts the emulator with args as a process of its own
// session and returns once it is ready, having printed its environment and
// EnvEmulatorPID to stdout: `eval "$(imgflow-emulator --background)"`
// cannot read a file an earlier emulator left, nor one not yet written.
// The emulator's own messages go to a log file, named in the output.
func startInBackground(args []string, stdout io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("background: %w", err)
	}
	log, err := os.CreateTemp("", "imgflow-emulator-*.log")
	if err != nil {
		return fmt.Errorf("background: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // Ctrl-C in the shell does not reach it
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("background: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("background: %w", err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var env []string
	timeout := time.After(readyTimeout)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				return fmt.Errorf("the emulator exited before it was ready:\n%s", tail(log.Name(), 20))
			}
			env = append(env, line)
			if !strings.HasPrefix(line, "# ready") {
				continue
			}
			env[len(env)-1] = fmt.Sprintf("export %s=%d", EnvEmulatorPID, cmd.Process.Pid)
			env = append(env, "# log: "+log.Name(),
				"# ready: imgflow run --target azure WORKFLOW; kill $"+EnvEmulatorPID+" stops the emulator")
			_, err := fmt.Fprintln(stdout, strings.Join(env, "\n"))
			// The emulator prints nothing more: the pipe may close.
			_ = cmd.Process.Release()
			return err
		case <-timeout:
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			_ = cmd.Wait()
			return fmt.Errorf("the emulator was not ready within %s:\n%s", readyTimeout, tail(log.Name(), 20))
		}
	}
}

// withoutBackground returns args without the --background flag.
func withoutBackground(args []string) []string {
	var out []string
	for _, a := range args {
		switch strings.TrimLeft(a, "-") {
		case "background", "background=true":
			continue
		}
		out = append(out, a)
	}
	return out
}

// tail returns the last n lines of a file, for an error.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return errors.Unwrap(err).Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
