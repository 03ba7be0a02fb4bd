//go:build !linux

package main

import (
	"errors"
	"io"
)

// EnvEmulatorPID is the variable a background start exports.
const EnvEmulatorPID = "IMGFLOW_EMULATOR_PID"

func startInBackground([]string, io.Writer) error {
	return errors.New("imgflow-emulator runs on Linux only")
}

func withoutBackground(args []string) []string { return args }

// azuriteProc needs Linux: Azurite runs in its own process group that
// dies with the emulator (Pdeathsig).
type azuriteProc struct {
	url    string
	pid    int
	exited chan struct{}
}

func findAzurite(string) (string, error) {
	return "", errors.New("imgflow-emulator runs on Linux only")
}

func startAzurite(string, []string, string) (*azuriteProc, error) {
	return nil, errors.New("imgflow-emulator runs on Linux only")
}

func (a *azuriteProc) stop() error { return nil }
