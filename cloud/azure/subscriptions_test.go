package azure_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// A subscription the credential cannot see is refused when first named,
// before any change in it; one it can see gets a provider of its own.
func TestForSubscriptionChecksTheSubscription(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	_, err := w.p.ForSubscription(w.ctx, "00000000-0000-0000-0000-00000000beef")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "subscription 00000000-0000-0000-0000-00000000beef not found or not accessible with this credential")

	same, err := w.p.ForSubscription(w.ctx, w.f.SubscriptionID())
	require.NoError(t, err)
	assert.Equal(t, w.f.SubscriptionID(), same.SubscriptionID())
	assert.NotSame(t, w.p, same)
}
