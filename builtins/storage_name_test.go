package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

// otherTarget is the sandbox's cloud seen as another target in a given
// subscription (the Azure target's names are the subscription's).
type otherTarget struct {
	cloud.Provider
	sub string
}

func (o otherTarget) Target() string         { return "azure" }
func (o otherTarget) SubscriptionID() string { return o.sub }

const nameSnippet = `output("name", storage_account_name(prefix = "aksvhdclassic"))`

func outputOf(t *testing.T, s *snippetSandbox) any {
	t.Helper()
	res := s.execApply(nameSnippet, nil)
	require.NoError(t, res.Err)
	require.Len(t, res.Outputs, 1)
	return res.Outputs[0].Value
}

// storage_account_name is the prefix and a hash of the subscription: the
// same for one subscription, another for another one, and on the local
// target (random subscription per state) one fixed name.
func TestStorageAccountNameComesFromTheSubscription(t *testing.T) {
	s := newSnippetSandbox(t)
	local := outputOf(t, s)
	assert.Equal(t, "aksvhdclassic25bf8e1a", local, "the local target hashes a fixed id")

	s.apply = otherTarget{Provider: s.cloud, sub: "11111111-2222-3333-4444-555555555555"}
	a := outputOf(t, s)
	assert.Regexp(t, `^aksvhdclassic[0-9a-f]{8}$`, a)
	assert.NotEqual(t, local, a)
	assert.Equal(t, a, outputOf(t, s), "stable in one subscription")

	s.apply = otherTarget{Provider: s.cloud, sub: "99999999-2222-3333-4444-555555555555"}
	assert.NotEqual(t, a, outputOf(t, s), "another subscription, another name")
}

func TestStorageAccountNameRefusesABadPrefix(t *testing.T) {
	s := newSnippetSandbox(t)
	for src, want := range map[string]string{
		`storage_account_name(prefix = "AKS-vhd")`:           `contains 'A', 'K', 'S', '-'`,
		`storage_account_name(prefix = "abcdefghijklmnopq")`: "is 17 characters long; it must be 1–16",
		`storage_account_name("aksvhd")`:                     "positional",
	} {
		res := s.execApply(src, nil)
		require.Error(t, res.Err, src)
		assert.Contains(t, res.Err.Error(), want, src)
	}
}
