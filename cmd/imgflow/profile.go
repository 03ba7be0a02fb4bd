package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileEnv, when set, names a file that receives a CPU profile of the
// whole command (after package init, which GODEBUG=inittrace=1 shows),
// sampled at 1 kHz: a plan takes tens of milliseconds, too few for the
// default 100 Hz. Profiles of many runs merge with `go tool pprof`. Not
// in the help: it is for imgflow's developers.
const profileEnv = "IMGFLOW_CPUPROFILE"

// startProfile starts the profile profileEnv asks for; the returned stop
// writes it.
func startProfile() (stop func()) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "imgflow: %s: %v\n", profileEnv, err)
		return func() {}
	}
	// Before StartCPUProfile, which would otherwise set 100 Hz (the
	// runtime then warns that the rate was already set: harmless).
	runtime.SetCPUProfileRate(1000)
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "imgflow: %s: %v\n", profileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
