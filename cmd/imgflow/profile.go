package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// The profiles of a whole command (after package init, which
// GODEBUG=inittrace=1 shows), for imgflow's developers, so not in the
// help. Profiles of many runs merge with `go tool pprof`.
const (
	// cpuProfileEnv names a file for a CPU profile sampled at 1 kHz: a
	// plan takes tens of milliseconds, too few for the default 100 Hz.
	cpuProfileEnv = "IMGFLOW_CPUPROFILE"
	// memProfileEnv names a file for the allocations (`go tool pprof
	// -sample_index=alloc_space`), sampled every 4 KiB: a short command
	// that never collects pays for every byte it allocates in fresh
	// pages, so the bytes are the cost to look at.
	memProfileEnv = "IMGFLOW_MEMPROFILE"
	// memProfileRate is the allocation profile's sampling interval.
	memProfileRate = 4096
)

// startProfile starts the profiles the environment asks for; the returned
// stop writes them.
func startProfile() (stop func()) {
	stopCPU, stopMem := startCPUProfile(), startMemProfile()
	return func() { stopCPU(); stopMem() }
}

func startCPUProfile() (stop func()) {
	f := profileFile(cpuProfileEnv)
	if f == nil {
		return func() {}
	}
	// Before StartCPUProfile, which would otherwise set 100 Hz (the
	// runtime then warns that the rate was already set: harmless).
	runtime.SetCPUProfileRate(1000)
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "imgflow: %s: %v\n", cpuProfileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

func startMemProfile() (stop func()) {
	f := profileFile(memProfileEnv)
	if f == nil {
		return func() {}
	}
	previous := runtime.MemProfileRate
	runtime.MemProfileRate = memProfileRate
	return func() {
		// The profile scales its samples by the rate in force when it
		// is written, and holds the allocations up to the last
		// collection: collect, write, then restore the rate.
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			fmt.Fprintf(os.Stderr, "imgflow: %s: %v\n", memProfileEnv, err)
		}
		runtime.MemProfileRate = previous
		f.Close()
	}
}

// profileFile creates the file env names, nil when it names none.
func profileFile(env string) *os.File {
	path := os.Getenv(env)
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "imgflow: %s: %v\n", env, err)
		return nil
	}
	return f
}
