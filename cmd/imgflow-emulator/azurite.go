//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
)

// azuriteScript is the blob service's entry point inside Azurite's
// install directory (.tools/azurite).
var azuriteScript = strings.TrimPrefix(azuritetest.MainScript, ".tools/azurite/")

// findAzurite locates the blob service script: under dir when given,
// else .tools/azurite of the repository around the working directory.
func findAzurite(dir string) (string, error) {
	if dir != "" {
		p := filepath.Join(dir, azuriteScript)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("azurite is not installed in %s (%s missing): run make deps, or point --azurite at .tools/azurite", dir, p)
		}
		return p, nil
	}
	p, err := azuritetest.FindScript()
	if err != nil {
		return "", fmt.Errorf("%w (or pass --azurite DIR)", err)
	}
	return p, nil
}

// azuriteProc is a running Azurite blob service, the leader of its own
// process group so that stopping it leaves no child behind.
type azuriteProc struct {
	url     string
	pid     int
	cmd     *exec.Cmd
	exited  chan struct{}
	tempDir string // removed on stop
}

const (
	// About a second on 2 idle vCPUs; more than 30 s when the machine is
	// busy with builds.
	azuriteStartTimeout = 2 * time.Minute
	azuriteStopTimeout  = 5 * time.Second
)

var listensOn = regexp.MustCompile(`listens on (http://[0-9.]+:[0-9]+)`)

func startAzurite(script string, accounts []string, data string) (*azuriteProc, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("azurite needs node on PATH: %w", err)
	}
	a := &azuriteProc{exited: make(chan struct{})}
	if data == "" {
		if a.tempDir, err = os.MkdirTemp("", "imgflow-emulator-"); err != nil {
			return nil, err
		}
		data = a.tempDir
	}
	// The fake keeps managed disk data in the development account.
	acc := []string{azuritetest.DevAccount + ":" + azuritetest.DevKey}
	for _, name := range accounts {
		if strings.EqualFold(name, azuritetest.DevAccount) {
			continue
		}
		acc = append(acc, name+":"+azuritetest.DevKey)
	}
	a.cmd = exec.Command(node, script, "--blobHost", "127.0.0.1", "--blobPort", "0",
		"--loose", "--skipApiVersionCheck", "--disableTelemetry", "--location", data)
	a.cmd.Env = append(os.Environ(), "AZURITE_ACCOUNTS="+strings.Join(acc, ";"))
	// Its own group (killed whole on stop), and SIGTERM if we die first.
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := a.cmd.Start(); err != nil {
		a.removeData()
		return nil, fmt.Errorf("start azurite: %w", err)
	}
	a.pid = a.cmd.Process.Pid
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listensOn.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		_ = a.cmd.Wait()
		close(a.exited)
	}()
	select {
	case a.url = <-urls:
		return a, nil
	case <-a.exited:
		a.removeData()
		return nil, errors.New("azurite exited before listening (is the port free?)")
	case <-time.After(azuriteStartTimeout):
		_ = a.stop()
		return nil, fmt.Errorf("azurite did not listen within %s", azuriteStartTimeout)
	}
}

// stop ends the process group: SIGTERM, then SIGKILL if it lingers.
func (a *azuriteProc) stop() error {
	defer a.removeData()
	if err := syscall.Kill(-a.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	select {
	case <-a.exited:
	case <-time.After(azuriteStopTimeout):
		_ = syscall.Kill(-a.pid, syscall.SIGKILL)
		<-a.exited
	}
	// Children that outlived the leader are killed with the group.
	if err := syscall.Kill(-a.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func (a *azuriteProc) removeData() {
	if a.tempDir != "" {
		_ = os.RemoveAll(a.tempDir)
	}
}
