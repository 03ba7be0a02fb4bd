// Package transfer moves page blob content: it cuts a sparse source into
// aligned chunks or data pieces (Chunks, Pieces), runs them through a
// bounded pipeline (RunChunks) and identifies the content by its sparse
// digest (SparseDigest, Digester). Every target's uploads and copies use
// it, so a blob's digest is the same whoever wrote it.
package transfer
