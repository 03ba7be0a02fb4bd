//go:build !(linux || darwin || freebsd)

package memlimit

func addressSpaceLimit() uint64 { return 0 }

func addressSpaceUsed() uint64 { return 0 }
