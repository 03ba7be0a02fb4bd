package local

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// removeOrphanData removes the data files under the blob directory that no
// blob, managed image, image version or disk of st refers to: those a
// delete left when its process died between saving the state and removing
// the file (see azsim's update). Open runs it under the directory lock,
// so no other process is writing them.
func (p *Provider) removeOrphanData(st *State) error {
	keep := p.referencedData(st)
	tmp := filepath.Join(p.files.dir, tmpDirName)
	return filepath.WalkDir(p.files.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == tmp {
				return filepath.SkipDir // Open empties it
			}
			return nil
		}
		if !d.Type().IsRegular() || keep[path] {
			return nil
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove unreferenced data file: %w", err)
		}
		return nil
	})
}

// referencedData is the set of data files the resources of st use.
func (p *Provider) referencedData(st *State) map[string]bool {
	keep := map[string]bool{}
	for _, rg := range st.ResourceGroups {
		for _, img := range rg.Images {
			keep[p.dataFile(img.ID)] = true
		}
		for _, d := range rg.Disks {
			keep[p.dataFile(d.ID)] = true
		}
		for _, g := range rg.Galleries {
			for _, def := range g.Definitions {
				for _, v := range def.Versions {
					keep[p.dataFile(v.ID)] = true
				}
			}
		}
		for _, sa := range rg.StorageAccounts {
			for container, c := range sa.Containers {
				for name := range c.Blobs {
					keep[p.blobFile(sa.Name, container, name)] = true
				}
			}
		}
	}
	return keep
}
