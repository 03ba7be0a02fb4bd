package local

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/deepcopy"
)

// A change works on deepcopy.Of's copy of the state: it must equal the state,
// share nothing with it, and what the changes leave in memory must be what
// the state file gives back (the JSON round trip the copy replaced).
func TestDeepCopyOfAPopulatedState(t *testing.T) {
	p := newTestProvider(t)
	f := &fixture{p: p, sub: p.SubscriptionID()}
	populate(t, f)
	st := f.p.Snapshot()

	cp := deepcopy.Of(st)
	assert.Equal(t, st, cp)
	data, err := json.Marshal(st)
	require.NoError(t, err)
	var reloaded State
	require.NoError(t, json.Unmarshal(data, &reloaded))
	reloaded.Normalize()
	assert.Equal(t, &reloaded, st, "the state in memory is what a reload gives")

	rg := cp.ResourceGroups[rgName]
	rg.Tags["a"] = "changed"
	def := rg.Galleries[galName].Definitions[defName]
	def.Versions["1.0.0"].TargetRegions[0].Name = "changed"
	*def.EndOfLife = def.EndOfLife.AddDate(1, 0, 0)
	delete(rg.StorageAccounts, account)
	orig := st.ResourceGroups[rgName]
	assert.Equal(t, "b", orig.Tags["a"])
	assert.Equal(t, "westeurope", orig.Galleries[galName].Definitions[defName].Versions["1.0.0"].TargetRegions[0].Name)
	assert.Equal(t, fixedTime, *orig.Galleries[galName].Definitions[defName].EndOfLife)
	assert.Contains(t, orig.StorageAccounts, account)
}
