// Package faults injects failures, crashes and latency into a run, for
// tests and benchmarks: a Faults set names builtins or Provider operations
// to fail, and WithFaults and WithLatency wrap a cloud.Provider with them
// (cloud.Intercept); builtins/faulthook turns a set into a run's builtin
// call hooks. Production code never imports it; the caller that builds
// the run (a test, the test harness) installs it.
package faults
