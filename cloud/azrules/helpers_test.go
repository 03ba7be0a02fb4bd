package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
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
	var ce *cloud.Error
	require.ErrorAs(t, err, &ce, "want %s, got %v", code, err)
	assert.Equal(t, code, ce.Code)
	assert.Equal(t, cloud.StatusOf(code), ce.StatusCode)
	assert.NotZero(t, ce.StatusCode)
	if resource != "" {
		assert.Equal(t, resource, ce.Resource)
	}
	for _, f := range fragments {
		assert.Contains(t, ce.Message, f)
	}
	return ce
}
