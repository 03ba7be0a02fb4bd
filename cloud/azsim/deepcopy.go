package azsim

import (
	"maps"
	"slices"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// Deep copies of the cloud types. Values crossing the Provider boundary are
// copied both ways: a caller mutating a returned Tags map, or the map it
// passed in, must not reach the stored state behind the mutex.

func copyTags(t cloud.Tags) cloud.Tags {
	if t == nil {
		return nil
	}
	return maps.Clone(t)
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	// UTC and no monotonic reading, as a JSON round trip would give.
	u := t.UTC().Round(0)
	return &u
}

func copyGallery(g cloud.Gallery) cloud.Gallery {
	g.Tags = copyTags(g.Tags)
	if g.Community != nil {
		c := *g.Community
		g.Community = &c
	}
	g.PublicNames = slices.Clone(g.PublicNames)
	return g
}

func copyDefinition(d cloud.ImageDefinition) cloud.ImageDefinition {
	d.Tags = copyTags(d.Tags)
	if d.Features != nil {
		d.Features = maps.Clone(d.Features)
	}
	d.EndOfLife = copyTime(d.EndOfLife)
	return d
}

func copyVersion(v cloud.ImageVersion) cloud.ImageVersion {
	v.Tags = copyTags(v.Tags)
	v.EndOfLife = copyTime(v.EndOfLife)
	v.TargetRegions = slices.Clone(v.TargetRegions)
	v.Replication = slices.Clone(v.Replication)
	return v
}

func copyImage(img cloud.ManagedImage) cloud.ManagedImage {
	img.Tags = copyTags(img.Tags)
	return img
}

func copyDisk(d cloud.Disk) cloud.Disk {
	d.Tags = copyTags(d.Tags)
	return d
}
