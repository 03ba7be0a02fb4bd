package local

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/imgflow/imgflow/cloud/azsim"
)

// fileStore persists the state in state.json (azsim.Store).
type fileStore struct {
	path     string
	readOnly bool
}

// Save implements azsim.Store.
func (s *fileStore) Save(st *State) error {
	if s.readOnly {
		return errReadOnly
	}
	return saveState(s.path, st)
}

// loadState reads state.json, refusing a state of another subscription
// than want ("": any); ok is false when the file does not exist.
func loadState(path, want string) (st *State, ok bool, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	s, err := decodeStateFile(data)
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if s.Format > azsim.StateFormat {
		return nil, false, fmt.Errorf("read %s: state format %d is newer than this imgflow supports (%d)", path, s.Format, azsim.StateFormat)
	}
	if s.SubscriptionID == "" {
		return nil, false, fmt.Errorf("read %s: no subscription_id", path)
	}
	if want != "" && !strings.EqualFold(want, s.SubscriptionID) {
		return nil, false, fmt.Errorf("the local state of %s is subscription %s, not %s", path, s.SubscriptionID, want)
	}
	s.Format = azsim.StateFormat
	s.Normalize()
	return s, true, nil
}

// saveState writes state.json atomically: a temp file in the same
// directory, fsynced, renamed over the old one, then the directory fsynced
// so the rename itself survives a crash.
func saveState(path string, st *State) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".state-*.json")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems refuse fsync on a directory; the rename is done.
	_ = d.Sync()
	return nil
}
