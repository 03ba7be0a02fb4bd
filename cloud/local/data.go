package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// Data of compute resources. Azure copies a source's bytes when it
// creates a managed image, an image version or a disk from it, so later
// changes to the source do not reach them. Each such resource therefore
// gets its own data file, a sparse copy of its source's content taken at
// creation, so a disk exported from a version reads what the version was
// made from.

// dataDirName is where the data files live, under the blob directory (so
// temp files rename into place); a leading dot cannot clash with a
// storage account name.
const dataDirName = ".compute"

// dataFile is the data file of the resource with the given ARM id
// (case-insensitive): a hash, since ids can be longer than a file name.
func (p *Provider) dataFile(id string) string {
	sum := sha256.Sum256([]byte(key(id)))
	return filepath.Join(p.blobDir, dataDirName, hex.EncodeToString(sum[:]))
}

// content is where a resource's bytes are: size bytes of the file at path.
type content struct {
	path string
	size int64
}

// maxSourceDepth bounds the resolution of source chains.
const maxSourceDepth = 32

// sourceContent returns the content of an image source. It runs under the
// state lock, after the source was checked.
func (p *Provider) sourceContent(st *State, src cloud.ImageSource, resource string, depth int) (content, error) {
	if depth > maxSourceDepth {
		return content{}, azrules.InvalidParameter(resource, "The source chain of '%s' is too deep or circular.", resource)
	}
	if q, qst := p.sourcePeer(st, src); q != nil {
		return q.sourceContent(qst, src, resource, depth) // its data files are the peer's
	}
	switch src.Kind {
	case cloud.SourceVHD:
		ref, err := cloud.ParseBlobURL(src.URI)
		if err != nil {
			return content{}, azrules.InvalidParameter(resource, "%v", err)
		}
		sa, _, b, err := p.lookupBlob(st, ref)
		if err != nil {
			return content{}, err
		}
		return content{path: p.blobFile(sa.Name, ref.Container, b.Name), size: b.Size}, nil
	case cloud.SourceImageVersion:
		_, v, err := p.versionByID(st, src.ID, resource)
		if err != nil {
			return content{}, err
		}
		return p.resourceContent(st, v.ID, v.Source, depth+1)
	case cloud.SourceManagedImage:
		img, err := p.managedImageByID(st, src.ID, resource)
		if err != nil {
			return content{}, err
		}
		return p.resourceContent(st, img.ID, img.Source, depth+1)
	}
	return content{}, azrules.InvalidParameter(resource, "The source kind '%s' is not supported.", src.Kind)
}

// resourceContent returns the content of a managed image or image version:
// its data file or, for one made before resources had data files, its
// source's content.
func (p *Provider) resourceContent(st *State, id string, src cloud.ImageSource, depth int) (content, error) {
	if q, qst := p.peerState(st, idSubscription(id)); q != nil {
		return q.resourceContent(qst, id, src, depth) // another subscription's resource has its data there
	}
	path := p.dataFile(id)
	if fi, err := os.Stat(path); err == nil {
		return content{path: path, size: fi.Size()}, nil
	}
	return p.sourceContent(st, src, id, depth)
}

// dataCopy asks updateWithData to give the resource id a data file
// holding src.
type dataCopy struct {
	id  string
	src content
}

// errNeedData aborts an update attempt whose data is not copied yet.
var errNeedData = errors.New("local: data copy needed")

// maxDataAttempts bounds the optimistic copies of updateWithData; the
// last attempt copies under the lock.
const maxDataAttempts = 3

// updateWithData is update for a call that may create a resource with a
// data file. fn works as for update and returns the copy the new resource
// needs (nil when none, e.g. an idempotent PUT of an existing one).
//
// Like blob transfers, the copy runs outside the lock: a first attempt
// learns the source and fails; its file is copied to a temp file; the
// next attempt runs fn again on the current state and, if the source is
// still the same file (files are replaced, never rewritten), renames the
// copy into place. Should the source keep being replaced, the last
// attempt copies under the lock.
func (p *Provider) updateWithData(ctx context.Context, fn func(st *State) (*dataCopy, error)) error {
	var tmp string // a copy made by an earlier attempt
	var tmpSrc os.FileInfo
	defer func() {
		if tmp != "" {
			os.Remove(tmp)
		}
	}()
	for attempt := 1; ; attempt++ {
		var need content
		err := p.update(ctx, func(st *State) error {
			c, err := fn(st)
			if err != nil || c == nil {
				return err
			}
			dst := p.dataFile(c.id)
			switch {
			case tmp != "" && sameFile(tmpSrc, c.src.path):
				if err := placeData(tmp, dst); err != nil {
					return err
				}
				tmp = ""
				return nil
			case attempt == maxDataAttempts:
				locked, _, err := p.copyData(ctx, c.src)
				if err != nil {
					return err
				}
				if err := placeData(locked, dst); err != nil {
					os.Remove(locked)
					return err
				}
				return nil
			}
			need = c.src
			return errNeedData
		})
		if !errors.Is(err, errNeedData) {
			return err
		}
		if tmp != "" {
			os.Remove(tmp)
			tmp = ""
		}
		tmp, tmpSrc, err = p.copyData(ctx, need)
		if errors.Is(err, os.ErrNotExist) {
			continue // the source went away: the next attempt says why
		}
		if err != nil {
			return err
		}
	}
}

// placeData moves a copied temp file into place as a data file.
func placeData(tmp, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// copyData makes a sparse temp copy of src and returns its name and the
// source file's identity.
func (p *Provider) copyData(ctx context.Context, src content) (string, os.FileInfo, error) {
	f, err := os.Open(src.path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	tmp, _, err := p.writeTemp(ctx, src.size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, f, dataRanges(f, src.size), src.size)
	})
	if err != nil {
		return "", nil, fmt.Errorf("copy data from %s: %w", src.path, err)
	}
	return tmp, fi, nil
}

func sameFile(fi os.FileInfo, path string) bool {
	cur, err := os.Stat(path)
	return err == nil && os.SameFile(fi, cur)
}

// forgetData returns a deleted resource's data file, for updateRemoving
// to remove once the state without the resource is saved.
func (p *Provider) forgetData(id string) string { return p.dataFile(id) }
