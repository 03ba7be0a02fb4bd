// Package ensure builds imgflow's idempotent "read, create what is
// missing, refuse a conflicting existing resource" semantics (EnsureGallery,
// EnsureImageDefinition, EnsurePageBlob, …) and the replication waits
// (Replicate, WaitReplicated) on top of a cloud.Provider's plain get and
// create operations, so that a target only implements those primitives.
package ensure
