//go:build !unix

package packer

import (
	"os"
	"os/exec"
)

// ownProcessGroup is a no-op where process groups do not exist.
func ownProcessGroup(*exec.Cmd) {}

// interruptGroup interrupts the process itself (no process groups here).
func interruptGroup(p *os.Process) error { return p.Signal(os.Interrupt) }

// killGroup is a no-op: exec's WaitDelay kills the process itself.
func killGroup(int) {}
