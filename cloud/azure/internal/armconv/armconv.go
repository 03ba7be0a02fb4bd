// Package armconv converts between package cloud's types and the ARM SDK
// models, written once for both ends of the wire: the Azure target
// (cloud/azure) builds requests from cloud values and reads answers into
// them; the fake ARM (cloud/azure/fakearm) reads requests into cloud
// values for the simulation and answers its results as SDK models.
package armconv

import (
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"

	"github.com/imgflow/imgflow/cloud"
)

// ResourceGroupOf reads a resource group model (an answer, or the fake's
// request) into a cloud.ResourceGroup; name stands in for a missing name.
func ResourceGroupOf(g *armresources.ResourceGroup, name string) cloud.ResourceGroup {
	out := cloud.ResourceGroup{ID: Deref(g.ID), Name: Deref(g.Name), Location: FoldLocation(Deref(g.Location)), Tags: TagsOf(g.Tags)}
	if out.Name == "" {
		out.Name = name
	}
	return out
}

// ResourceGroup is a resource group as ARM answers it.
func ResourceGroup(rg cloud.ResourceGroup) armresources.ResourceGroup {
	return armresources.ResourceGroup{
		ID: Opt[string](rg.ID), Name: Opt[string](rg.Name), Location: To(rg.Location), Tags: Tags(rg.Tags),
		Type:       To("Microsoft.Resources/resourceGroups"),
		Properties: &armresources.ResourceGroupProperties{ProvisioningState: To(cloud.ProvisioningSucceeded)},
	}
}

// Tags converts tags for a model; nil stays nil.
func Tags(t cloud.Tags) map[string]*string {
	if t == nil {
		return nil
	}
	out := make(map[string]*string, len(t))
	for k, v := range t {
		out[k] = To(v)
	}
	return out
}

// TagsOf reads a model's tags; none is nil.
func TagsOf(t map[string]*string) cloud.Tags {
	if len(t) == 0 {
		return nil
	}
	out := make(cloud.Tags, len(t))
	for k, v := range t {
		out[k] = Deref(v)
	}
	return out
}

// FoldLocation folds a location name or display name as ARM compares
// them ("West Europe" → "westeurope").
func FoldLocation(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, " ", ""))
}

// To points at v.
func To[T any](v T) *T { return &v }

// Opt is nil for "" (a field the model leaves out), else a pointer to s.
func Opt[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

// Deref is *p, or the zero value for nil.
func Deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// StrOf is the string of an SDK enum pointer, "" for nil.
func StrOf[T ~string](p *T) string {
	if p == nil {
		return ""
	}
	return string(*p)
}

// StorageAccountOf reads a storage account model into a
// cloud.StorageAccount (without its blob endpoint, which the caller
// knows best); rg and name stand in for what the model lacks.
func StorageAccountOf(a *armstorage.Account, rg, name string) cloud.StorageAccount {
	out := cloud.StorageAccount{ID: Deref(a.ID), Name: Deref(a.Name), ResourceGroup: rg, Location: FoldLocation(Deref(a.Location)), Tags: TagsOf(a.Tags)}
	if out.Name == "" {
		out.Name = name
	}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil {
		out.ResourceGroup = rid.ResourceGroup
	}
	if a.Properties != nil && a.Properties.PrimaryEndpoints != nil && a.Properties.PrimaryEndpoints.Blob != nil {
		out.BlobEndpoint = strings.TrimRight(*a.Properties.PrimaryEndpoints.Blob, "/")
	}
	return out
}

// StorageAccount is a storage account as ARM answers it: the StorageV2,
// Standard_LRS kind the Azure target creates.
func StorageAccount(sa cloud.StorageAccount) armstorage.Account {
	return armstorage.Account{
		ID: Opt[string](sa.ID), Name: To(sa.Name), Location: To(sa.Location), Type: To("Microsoft.Storage/storageAccounts"),
		Kind: To(armstorage.KindStorageV2), SKU: &armstorage.SKU{Name: To(armstorage.SKUNameStandardLRS)}, Tags: Tags(sa.Tags),
		Properties: &armstorage.AccountProperties{
			ProvisioningState: To(armstorage.ProvisioningStateSucceeded),
			PrimaryEndpoints:  &armstorage.Endpoints{Blob: To(strings.TrimRight(sa.BlobEndpoint, "/") + "/")},
			PrimaryLocation:   To(sa.Location),
		},
	}
}
