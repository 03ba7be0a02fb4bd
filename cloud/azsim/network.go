package azsim

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// Virtual networks, as much of them as a VM's network interface needs:
// a resource in a group, deleted with it. test_vm's Azure target PUTs
// one through the generic resources API; the local target makes none.

const typeVNet = "Microsoft.Network/virtualNetworks"

// VirtualNetwork is a virtual network; Properties are the request's
// (address space, subnets), answered as given.
type VirtualNetwork struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Location   string         `json:"location"`
	Properties map[string]any `json:"properties,omitempty"`
}

// GetVirtualNetwork returns the virtual network name of group rg.
func (p *Provider) GetVirtualNetwork(ctx context.Context, rg, name string) (*VirtualNetwork, error) {
	return read(ctx, p, func(st *State) (*VirtualNetwork, error) {
		g, err := p.lookupRG(st, rg)
		if err != nil {
			return nil, err
		}
		if vn := g.VNets[key(name)]; vn != nil {
			return vn, nil
		}
		return nil, azrules.ResourceNotFound(vnetID(st.SubscriptionID, g.Name, name), typeVNet, name, g.Name)
	})
}

// PutVirtualNetwork creates or replaces a virtual network of group rg,
// provisioned at once.
func (p *Provider) PutVirtualNetwork(ctx context.Context, rg string, in VirtualNetwork) (*VirtualNetwork, error) {
	return write(ctx, p, func(t *tx) (*VirtualNetwork, error) {
		g, err := p.lookupRG(t.st, rg)
		if err != nil {
			return nil, err
		}
		id := vnetID(t.st.SubscriptionID, g.Name, in.Name)
		loc, err := p.locIndex.Resolve(in.Location, typeVNet, id)
		if err != nil {
			return nil, err
		}
		vn := &VirtualNetwork{ID: id, Name: in.Name, Location: loc, Properties: deepcopy.Of(in.Properties)}
		if vn.Properties == nil {
			vn.Properties = map[string]any{}
		}
		vn.Properties["provisioningState"] = cloud.ProvisioningSucceeded
		if g.VNets == nil {
			g.VNets = map[string]*VirtualNetwork{}
		}
		g.VNets[key(in.Name)] = vn
		return vn, nil
	})
}

func vnetID(sub, rg, name string) string {
	return cloud.ResourceGroupID(sub, rg) + "/providers/" + typeVNet + "/" + name
}

// vnetExists reports whether the virtual network id (lowercased) is one
// of the state's, for azrules.CheckVMNetwork.
func vnetExists(st *State) func(id string) bool {
	return func(id string) bool {
		rid, err := cloud.ParseResourceID(id)
		if err != nil || !rid.Is("Microsoft.Network", "virtualNetworks") || !strings.EqualFold(rid.Subscription, st.SubscriptionID) {
			return false
		}
		g := st.ResourceGroups[key(rid.ResourceGroup)]
		return g != nil && g.VNets[key(rid.Names[0])] != nil
	}
}
