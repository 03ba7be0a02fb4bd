package azuritetest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel stop Azurite if the test binary dies
// without stopping it (a safety net; Stop is the way).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
