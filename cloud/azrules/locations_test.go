package azrules_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestDefaultLocations(t *testing.T) {
	var logical, physical int
	seen := map[string]bool{}
	for _, l := range azrules.DefaultLocations() {
		switch l.RegionType {
		case cloud.RegionTypeLogical:
			logical++
		case cloud.RegionTypePhysical:
			physical++
		}
		assert.Equal(t, strings.ToLower(l.Name), l.Name, "names are lowercase")
		assert.NotEmpty(t, l.DisplayName, l.Name)
		assert.Contains(t, []string{"Recommended", "Other"}, l.Category, l.Name)
		assert.False(t, seen[l.Name], "%s twice", l.Name)
		seen[l.Name] = true
	}
	assert.Positive(t, logical)
	assert.Greater(t, physical, 40)

	regions := azrules.NewRegions(azrules.DefaultLocations())
	loc, ok := regions.Physical("West Europe")
	assert.True(t, ok)
	assert.Equal(t, "westeurope", loc)
	_, ok = regions.Physical("europe")
	assert.False(t, ok, "a logical geography is not deployable")

	a, b := azrules.DefaultLocations(), azrules.DefaultLocations()
	a[0].Name = "changed"
	assert.NotEqual(t, a[0].Name, b[0].Name, "each call returns a fresh copy")
}
