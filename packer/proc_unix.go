//go:build unix

package packer

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// ownProcessGroup starts the command as the leader of a new process group,
// so signals sent to the group reach packer's plugin processes and the
// shell-local scripts they run, not just packer.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// interruptGroup sends SIGINT to the command's process group: packer's
// wrapper process ignores a SIGINT sent to it alone, and packer 1.6.6
// ignored SIGTERM while the azure-arm builder retried.
func interruptGroup(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGINT)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// killGroup sends SIGKILL to whatever is left of the command's process
// group. exec's WaitDelay only kills the leader.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
