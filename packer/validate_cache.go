package packer

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
)

// ValidateCache keeps the verdicts of `packer validate` on disk, so that a
// plan validates a build once, not at every plan: packer takes about a
// second of CPU per template, a plan without it a few milliseconds.
//
// An entry is named by an HMAC, under a random key made with the cache, of
// everything that decides the verdict (see writeValidateInputs): the inputs
// themselves, secrets among them, are never stored, and a short secret
// cannot be guessed from an entry's name without the key. An entry holds
// the verdict: valid, or packer's (redacted) error lines.
type ValidateCache struct {
	dir  string
	key  []byte
	sums *SumCache // what the files its keys hash are hashed through
}

// validateCacheEntry is one verdict as stored.
type validateCacheEntry struct {
	Valid    bool     `json:"valid"`
	ExitCode int      `json:"exit_code,omitempty"`
	Errors   []string `json:"errors,omitempty"`
	Output   []string `json:"output,omitempty"`
	// NotValidated is the reason of a *NotValidatedError packer's run
	// gave (a template for azure plugin 2.x).
	NotValidated string `json:"not_validated,omitempty"`
}

// OpenValidateCache opens the cache in dir, creating dir (0700) and its key
// (0600) when missing. The files its keys hash are hashed through sums
// (nil: a cache for this process only).
func OpenValidateCache(dir string, sums *SumCache) (*ValidateCache, error) {
	if sums == nil {
		sums = NewSumCache()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("packer validate cache: %w", err)
	}
	keyFile := filepath.Join(dir, "key")
	key, err := readUsed(keyFile)
	if errors.Is(err, os.ErrNotExist) || err == nil && len(key) != 32 {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("packer validate cache: %w", err)
		}
		// Two processes creating the key at once: the rename makes one
		// win, and each reads back the one that did.
		if err := writeAtomic(keyFile, key); err != nil {
			return nil, fmt.Errorf("packer validate cache: %w", err)
		}
		key, err = readUsed(keyFile)
	}
	if err != nil {
		return nil, fmt.Errorf("packer validate cache: %w", err)
	}
	return &ValidateCache{dir: dir, key: key, sums: sums}, nil
}

// Dir is the cache's directory.
func (c *ValidateCache) Dir() string { return c.dir }

// Validate returns the stored verdict on req, or runs r.Validate and
// stores its verdict when it is one (valid, a *ValidateError, or the
// *NotValidatedError of a run that refused only azure plugin 2.x's keys;
// not a cancellation, a missing variable or a template packer is not run
// for, which cost nothing to find again). A stored failure is returned
// as the *ValidateError packer's run gave. ran reports whether packer
// ran. stable and volatile are as for writeValidateInputs. When the inputs cannot be
// read (an unreadable file), the build is validated without the cache.
func (c *ValidateCache) Validate(ctx context.Context, r *Runner, req BuildRequest, stable map[string]string, volatile []string) (ran bool, err error) {
	mac := hmac.New(sha256.New, c.key)
	if ierr := r.writeValidateInputs(mac, req, stable, volatile, c.sums); ierr != nil {
		return true, r.Validate(ctx, req)
	}
	name := filepath.Join(c.dir, hex.EncodeToString(mac.Sum(nil))+".json")
	if e, ok := readEntry(name); ok {
		if e.Valid {
			return false, nil
		}
		if e.NotValidated != "" {
			return false, &NotValidatedError{Template: ResolvePath(req.WorkDir, req.TemplatePath), Reason: e.NotValidated}
		}
		return false, &ValidateError{Template: ResolvePath(req.WorkDir, req.TemplatePath), ExitCode: e.ExitCode, Errors: e.Errors, Output: e.Output}
	}
	err = r.Validate(ctx, req)
	var ve *ValidateError
	var nv *NotValidatedError
	switch {
	case ctx.Err() != nil:
	case err == nil:
		c.store(name, validateCacheEntry{Valid: true})
	case errors.As(err, &nv) && nv.ranPacker:
		c.store(name, validateCacheEntry{NotValidated: nv.Reason})
	case errors.As(err, &ve) && ve.cause == nil:
		c.store(name, validateCacheEntry{ExitCode: ve.ExitCode, Errors: ve.Errors, Output: ve.Output})
	}
	return true, err
}

func readEntry(name string) (validateCacheEntry, bool) {
	var e validateCacheEntry
	data, err := readUsed(name)
	if err != nil || json.Unmarshal(data, &e) != nil {
		return e, false
	}
	return e, true
}

// readUsed reads a file of the cache and marks it used, so that a trim of
// the cache directory keeps it (cachetrim).
func readUsed(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err == nil {
		cachetrim.Used(f, time.Now())
	}
	return data, err
}

// store writes an entry; a cache that cannot be written only costs the
// next plan another packer run.
func (c *ValidateCache) store(name string, e validateCacheEntry) {
	data, err := json.Marshal(e)
	if err == nil {
		_ = writeAtomic(name, data)
	}
}

// writeAtomic writes data to name (0600) through a temporary file renamed
// over it, so that a reader sees the whole file or none.
func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
