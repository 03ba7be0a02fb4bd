package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

var testRegions = azrules.NewRegions([]cloud.Location{
	{Name: "westeurope", DisplayName: "West Europe", RegionType: cloud.RegionTypePhysical},
	{Name: "eastus", DisplayName: "East US", RegionType: cloud.RegionTypePhysical},
	{Name: "northeurope", DisplayName: "North Europe", RegionType: cloud.RegionTypePhysical},
	{Name: "europe", DisplayName: "Europe", RegionType: cloud.RegionTypeLogical},
})

// requireRefusal asserts err is Azure's answer with code (and the status
// the code comes with), for resource, its message holding every fragment.
func requireRefusal(t *testing.T, err error, code, resource string, fragments ...string) *cloud.Error {
	t.Helper()
	assert.NotZero(t, cloud.StatusOf(code), "code %s has a status", code)
	ce := cloudtest.RequireError(t, err, cloud.StatusOf(code), code, fragments...)
	if resource != "" {
		assert.Equal(t, resource, ce.Resource)
	}
	return ce
}
