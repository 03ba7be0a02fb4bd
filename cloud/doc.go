// Package cloud defines what imgflow asks of a cloud: the Provider
// interface every target implements (cloud/local, cloud/azure), the
// resource types the builtins pass around, their ids, the errors a target
// answers with, and Azure's naming and shape rules.
//
// The rules live here, once, so that every target and the plan reject bad
// input the same way before anything is created. The jobs built on the
// Provider live beside it, each in its own package: cloud/ensure (the
// idempotent ensures and replication waits), cloud/transfer (chunked page
// blob transfer and digests), cloud/guest (the simulated guest content and
// checks) and cloud/faults (fault and latency injection for tests).
package cloud
