package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// By default Azurite serves the repository's workflows' accounts and the
// ones their simulated packer builds stage OS disks in (without them
// gen2.star and capz.star stop at packer_build); --accounts replaces the
// list.
func TestDefaultAccountsCoverTheWorkflowsBuilds(t *testing.T) {
	c, err := parse(nil, io.Discard)
	require.NoError(t, err)
	assert.Subset(t, c.accounts, azuritetest.DefaultAccounts())
	assert.Subset(t, c.accounts, azuritetest.StagingAccounts(fakearm.DefaultSubscriptionID))
	assert.Subset(t, c.accounts, azuritetest.WorkflowAccounts(fakearm.DefaultSubscriptionID), "the workflows' default storage accounts in the emulator's subscription")

	c, err = parse([]string{"--accounts", "a, b"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, c.accounts)
}

// -h names each flag's argument, not a command from its help text.
func TestHelpNamesTheFlagArguments(t *testing.T) {
	var out strings.Builder
	_, err := parse([]string{"-h"}, &out)
	require.Error(t, err)
	assert.Contains(t, out.String(), "-azurite dir\n")
	assert.NotContains(t, out.String(), "-azurite make deps")
}
