package azsim

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// StateFormat is the version of the state.json layout, so a later imgflow
// can migrate or refuse an older file instead of misreading it.
const StateFormat = 1

// State is the whole simulated subscription, as state.json holds it.
//
// Every collection is a map keyed by the lowercased resource name, because
// Azure names are case-insensitive; the resource keeps its original
// spelling for display. Blob names are case-sensitive in Azure and are
// keyed as is. encoding/json writes map keys sorted, so the file and
// Snapshot are deterministic.
type State struct {
	Format         int                            `json:"format"`
	SubscriptionID string                         `json:"subscription_id"`
	ResourceGroups map[string]*ResourceGroupState `json:"resource_groups,omitempty"`
}

// ResourceGroupState is a resource group and everything in it.
type ResourceGroupState struct {
	cloud.ResourceGroup
	// Base marks a resource read from the base target of a read-through
	// (what is below it may be there too); never stored.
	Base            bool                            `json:"-"`
	Galleries       map[string]*GalleryState        `json:"galleries,omitempty"`
	Images          map[string]*cloud.ManagedImage  `json:"images,omitempty"`
	StorageAccounts map[string]*StorageAccountState `json:"storage_accounts,omitempty"`
	Disks           map[string]*cloud.Disk          `json:"disks,omitempty"`
	// DiskGrants are the open read grants of Disks, by the same key.
	DiskGrants map[string]*DiskGrantState `json:"disk_grants,omitempty"`
	// VMs are test_vm's virtual machines; each OS disk is in Disks.
	VMs map[string]*cloud.VM `json:"vms,omitempty"`
	// RunCommands are the VMs' managed run commands, by lower(vm/name).
	RunCommands map[string]*RunCommandState `json:"run_commands,omitempty"`
	// VNets are the virtual networks of VMs' network interfaces.
	VNets map[string]*VirtualNetwork `json:"vnets,omitempty"`
}

// DiskGrantState is an open read grant (SAS) on a managed disk. The SAS
// signature is a secret: only its SHA-256 is kept, and a presented
// signature is checked against that hash.
type DiskGrantState struct {
	// Account is the host label of the disk's SAS URL (md-…), derived
	// from the disk id; Container is random per grant.
	Account   string `json:"account"`
	Container string `json:"container"`
	// SignedIdentifier is the SAS's si parameter (not a secret).
	SignedIdentifier string `json:"signed_identifier"`
	// SigSHA256 is the hex SHA-256 of the SAS's sig parameter.
	SigSHA256 string    `json:"sig_sha256"`
	Granted   time.Time `json:"granted"`
	Expires   time.Time `json:"expires"`
}

// GalleryState is a gallery and its image definitions.
type GalleryState struct {
	cloud.Gallery
	Base        bool                        `json:"-"` // as ResourceGroupState.Base
	Definitions map[string]*DefinitionState `json:"definitions,omitempty"`
}

// DefinitionState is an image definition and its versions.
type DefinitionState struct {
	cloud.ImageDefinition
	Base     bool                           `json:"-"` // as ResourceGroupState.Base
	Versions map[string]*cloud.ImageVersion `json:"versions,omitempty"`
	// Progress is the replication in progress of Versions, by the same
	// key (Options.Replication; never stored).
	Progress map[string]*VersionProgress `json:"-"`
}

// StorageAccountState is a storage account and its containers.
type StorageAccountState struct {
	cloud.StorageAccount
	Base       bool                       `json:"-"` // as ResourceGroupState.Base
	Containers map[string]*ContainerState `json:"containers,omitempty"`
}

// ContainerState is a blob container and the metadata of its blobs (the
// data lives in files under the blob directory).
type ContainerState struct {
	Base    bool                  `json:"-"` // as ResourceGroupState.Base
	Name    string                `json:"name"`
	Created time.Time             `json:"created"`
	Blobs   map[string]*BlobState `json:"blobs,omitempty"`
}

// BlobState is the metadata of one blob.
type BlobState struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
	MD5  string `json:"md5,omitempty"`
	// Digest is the content's transfer.SparseDigest.
	Digest  string    `json:"digest,omitempty"`
	Created time.Time `json:"created"`
	// Metadata are the blob's user metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
}

// NewState is an empty subscription.
func NewState(sub string) *State {
	return &State{Format: StateFormat, SubscriptionID: sub, ResourceGroups: map[string]*ResourceGroupState{}}
}

// key is the map key of a case-insensitive Azure name.
func key(name string) string { return strings.ToLower(name) }

// clone deep-copies the state through JSON. Mutations work on a clone that
// replaces the state only once the operation (and its save) succeeded, so
// a failed call never leaves half its changes behind. Going through JSON
// also makes an in-memory state compare equal to the same state reloaded
// from disk.
func (s *State) clone() *State {
	data, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("azsim: marshal state: %v", err)) // plain data: cannot fail
	}
	return decodeState(data)
}

func decodeState(data []byte) *State {
	var out State
	if err := json.Unmarshal(data, &out); err != nil {
		panic(fmt.Sprintf("azsim: unmarshal state: %v", err))
	}
	out.Normalize()
	return &out
}

// Normalize replaces nil maps by empty ones so lookups can insert freely.
func (s *State) Normalize() {
	initMap(&s.ResourceGroups)
	for _, rg := range s.ResourceGroups {
		rg.normalize()
	}
}

func (rg *ResourceGroupState) normalize() *ResourceGroupState {
	initMap(&rg.Galleries)
	initMap(&rg.Images)
	initMap(&rg.StorageAccounts)
	initMap(&rg.Disks)
	initMap(&rg.DiskGrants)
	for _, g := range rg.Galleries {
		g.normalize()
	}
	for _, sa := range rg.StorageAccounts {
		sa.normalize()
	}
	return rg
}

func (g *GalleryState) normalize() *GalleryState {
	initMap(&g.Definitions)
	for _, d := range g.Definitions {
		initMap(&d.Versions)
	}
	return g
}

func (sa *StorageAccountState) normalize() *StorageAccountState {
	initMap(&sa.Containers)
	for _, c := range sa.Containers {
		initMap(&c.Blobs)
	}
	return sa
}

func initMap[V any](m *map[string]V) {
	if *m == nil {
		*m = map[string]V{}
	}
}

// findStorageAccount looks an account up by name in every resource group:
// storage account names are global, and blob calls name only the account.
func (s *State) findStorageAccount(name string) (*ResourceGroupState, *StorageAccountState) {
	for _, rg := range s.ResourceGroups {
		if sa, ok := rg.StorageAccounts[key(name)]; ok {
			return rg, sa
		}
	}
	return nil, nil
}

// findGallery looks a gallery up by name in every resource group: gallery
// names are unique per subscription.
func (s *State) findGallery(name string) (*ResourceGroupState, *GalleryState) {
	for _, rg := range s.ResourceGroups {
		if g, ok := rg.Galleries[key(name)]; ok {
			return rg, g
		}
	}
	return nil, nil
}
