package main

import (
	"os"
	"os/exec"
	"path/filepath"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/packer"
)

// cacheDirEnv overrides where imgflow keeps its caches (tests, CI caches).
const cacheDirEnv = "IMGFLOW_CACHE_DIR"

// packerValidator returns what validates a plan's packer_build calls with
// the real `packer validate`: nil when off is set or when no packer is on
// PATH (plans then rely on imgflow's model of the template alone). Each
// distinct build is validated once per process and, through the cache in
// the user's cache directory, once until its inputs change.
func packerValidator(off bool) builtins.PackerValidator {
	if off {
		return nil
	}
	if _, err := exec.LookPath("packer"); err != nil {
		return nil
	}
	r := &packer.Runner{}
	if dir := cacheDir(); dir != "" {
		// The sums of the large files a template names are kept beside
		// those of the simulated builds' staged files: both by identity.
		sums := packer.OpenSumCache(filepath.Join(dir, sumsCache))
		if cache, err := packer.OpenValidateCache(filepath.Join(dir, validateCache), sums); err == nil {
			return builtins.PackerValidateOnce(builtins.PackerValidateCached(r, cache))
		}
	}
	// No cache directory (no HOME): validate every plan, as before.
	return builtins.PackerValidateOnce(r)
}

// cacheDir is $IMGFLOW_CACHE_DIR, or imgflow's directory in the user's
// cache directory ($XDG_CACHE_HOME or ~/.cache on Linux); "" when there is
// none.
func cacheDir() string {
	if dir := os.Getenv(cacheDirEnv); dir != "" {
		return dir
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "imgflow")
}
