package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/fatih/color"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// remoteState lists what a target other than the local one holds of
// imgflow's making, read through the provider's list operations: its
// galleries with their definitions and versions, in the local state's
// shape so the text and JSON are the same. A version's replication
// status is not in a list; the regions it targets are.
func remoteState(ctx context.Context, e *env, shared sharedFlags, asJSON bool) error {
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return err
	}
	t, err := openTarget(ctx, e, ws, shared.target)
	if err != nil {
		return err
	}
	defer t.close()
	st, err := listGalleries(ctx, t.provider)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, st)
	}
	printTree(e, st)
	fmt.Fprintln(e.stdout, e.paint(color.Faint)("(the "+t.name+" target lists galleries, their definitions and versions)"))
	return nil
}

// listGalleries reads every gallery of the provider's subscription, with
// its resource group, definitions and versions, into a state.
func listGalleries(ctx context.Context, p cloud.Provider) (*azsim.State, error) {
	st := azsim.NewState(p.SubscriptionID())
	galleries, err := p.ListGalleries(ctx)
	if err != nil {
		return nil, err
	}
	for _, g := range galleries {
		rg := st.ResourceGroups[strings.ToLower(g.ResourceGroup)]
		if rg == nil {
			group, err := p.GetResourceGroup(ctx, g.ResourceGroup)
			if err != nil {
				return nil, err
			}
			rg = &azsim.ResourceGroupState{ResourceGroup: *group}
			st.ResourceGroups[strings.ToLower(g.ResourceGroup)] = rg
			st.Normalize()
		}
		gs := &azsim.GalleryState{Gallery: g, Definitions: map[string]*azsim.DefinitionState{}}
		rg.Galleries[strings.ToLower(g.Name)] = gs
		defs, err := p.ListImageDefinitions(ctx, g.ResourceGroup, g.Name)
		if err != nil {
			return nil, err
		}
		for _, d := range defs {
			ds := &azsim.DefinitionState{ImageDefinition: d, Versions: map[string]*cloud.ImageVersion{}}
			gs.Definitions[strings.ToLower(d.Name)] = ds
			versions, err := p.ListImageVersions(ctx, g.ResourceGroup, g.Name, d.Name)
			if err != nil {
				return nil, err
			}
			for i := range versions {
				ds.Versions[strings.ToLower(versions[i].Name)] = &versions[i]
			}
		}
	}
	return st, nil
}
