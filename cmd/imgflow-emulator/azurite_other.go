//go:build !linux

package main

import "errors"

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
