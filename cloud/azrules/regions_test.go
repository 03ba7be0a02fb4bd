package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestRegionsPhysical(t *testing.T) {
	for in, want := range map[string]string{
		"westeurope":   "westeurope",
		"West Europe":  "westeurope",
		"WESTEUROPE":   "westeurope",
		"west europe":  "westeurope",
		"East US":      "eastus",
		"europe":       "", // logical: nothing is deployed there
		"marsnorth":    "",
		"":             "",
		"North Europe": "northeurope",
	} {
		got, ok := testRegions.Physical(in)
		assert.Equal(t, want, got, in)
		assert.Equal(t, want != "", ok, in)
	}
}

func TestRegionsResolve(t *testing.T) {
	got, err := testRegions.Resolve("West Europe", "Microsoft.Compute/galleries", "/id")
	require.NoError(t, err)
	assert.Equal(t, "westeurope", got)
	for _, bad := range []string{"europe", "marsnorth"} {
		_, err := testRegions.Resolve(bad, "Microsoft.Compute/galleries", "/id")
		requireRefusal(t, err, cloud.CodeLocationNotAvailableForResourceType, "/id",
			"'"+bad+"'", "resource type 'Microsoft.Compute/galleries'")
	}
}

func TestRegionsNames(t *testing.T) {
	assert.Equal(t, "West Europe", testRegions.DisplayName("westeurope"))
	assert.Equal(t, "marsnorth", testRegions.DisplayName("marsnorth"), "unknown names come back unchanged")
	assert.Equal(t, "eastus", testRegions.Canonical("East US"))
	assert.Equal(t, "marsnorth", testRegions.Canonical("Mars North"), "unknown names come back folded")
	l, ok := testRegions.Lookup("Europe")
	require.True(t, ok)
	assert.Equal(t, cloud.RegionTypeLogical, l.RegionType)
}

// The index keeps its own copy of the list: a caller reusing its slice
// afterwards changes no answer.
func TestRegionsKeepTheirOwnList(t *testing.T) {
	locs := []cloud.Location{{Name: "westeurope", DisplayName: "West Europe", RegionType: cloud.RegionTypePhysical}}
	r := azrules.NewRegions(locs)
	locs[0] = cloud.Location{Name: "marsnorth", RegionType: cloud.RegionTypeLogical}
	got, ok := r.Physical("West Europe")
	assert.True(t, ok)
	assert.Equal(t, "westeurope", got)
	_, ok = r.Lookup("marsnorth")
	assert.False(t, ok)
}

// IndexRegions answers as NewRegions does, from the list it is given.
func TestIndexRegionsAnswersAsNewRegions(t *testing.T) {
	locs := azrules.DefaultLocations()
	own, copied := azrules.IndexRegions(locs), azrules.NewRegions(locs)
	for _, l := range locs {
		for _, name := range []string{l.Name, l.DisplayName} {
			a, aok := own.Lookup(name)
			b, bok := copied.Lookup(name)
			assert.Equal(t, bok, aok, name)
			assert.Equal(t, b, a, name)
		}
	}
}
