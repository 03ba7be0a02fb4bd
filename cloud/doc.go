// Package cloud defines what imgflow asks of a cloud: the Provider
// interface every target implements (cloud/local, cloud/azure), the
// resource types the builtins pass around, and Azure's naming and shape
// rules.
//
// The rules live here, once, so that every target and the plan reject bad
// input the same way before anything is created. The ensure functions
// (EnsureGallery, EnsureImageDefinition, …) build imgflow's idempotent
// "read, create what is missing, refuse a conflicting existing resource"
// semantics on top of the Provider's plain get/create operations, so a
// target only implements those primitives.
package cloud
