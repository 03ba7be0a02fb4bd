// Package overlay is the planning provider: a cloud.Provider over a real
// target that reads through to it and records every write instead of
// making it.
//
// imgflow's validation pass and `imgflow plan` run a workflow against it.
// It is the one simulation (cloud/azsim) reading its base through: every
// read the simulation cannot answer from what the dry run did goes to the
// base; every write is checked with the simulation's rules, kept in the
// simulation, logged (Changes) and answered with what the target would
// return, placeholders standing for what only the platform can generate.
// The base is never changed.
package overlay

import (
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// Provider is the overlay over a base provider. It is safe for concurrent
// use.
type Provider struct {
	*azsim.Provider
	base cloud.Provider
	sub  string
}

var _ cloud.Provider = (*Provider)(nil)

// New returns an overlay over base. base is only read.
func New(base cloud.Provider) *Provider {
	sim, err := azsim.New(nil, azsim.Options{Base: base, DryRun: true})
	if err != nil {
		panic(err) // a simulation over a base takes the base's subscription: nothing to generate
	}
	return &Provider{Provider: sim, base: base, sub: base.SubscriptionID()}
}
