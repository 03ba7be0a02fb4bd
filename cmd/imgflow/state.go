package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fatih/color"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/internal/tenant"
)

func cmdState(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("state", e)
	var shared sharedFlags
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addTarget(fs)
	shared.addOutput(fs, true)
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
	}
	if shared.target.name != "local" {
		return remoteState(ctx, e, shared, asJSON)
	}
	dir, err := stateDirOf(shared.root, shared.target.stateDir)
	if err != nil {
		return err
	}
	p, err := local.Open(dir, local.Options{ReadOnly: true}) // a display command changes nothing
	if err != nil {
		return err
	}
	defer p.Close()
	st := p.Snapshot()
	if asJSON {
		return writeJSON(e.stdout, st)
	}
	printTree(e, st)
	return printOtherSubscriptions(e, dir)
}

// printOtherSubscriptions shows the local target's other subscriptions
// (a gallery in another subscription: tenant.LocalDir), after the
// target's own.
func printOtherSubscriptions(e *env, dir string) error {
	subs, err := filepath.Glob(tenant.LocalDir(dir, "*"))
	if err != nil {
		return err
	}
	sort.Strings(subs)
	for _, sub := range subs {
		p, err := local.Open(sub, local.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		st := p.Snapshot()
		if err := p.Close(); err != nil {
			return err
		}
		printTree(e, st)
	}
	return nil
}

// printTree shows the local subscription as a tree: resource groups,
// galleries (with their public names), definitions, versions with their
// regions, test VMs, disks, images, storage accounts and blobs.
func printTree(e *env, st *local.State) {
	dim, bold := e.paint(color.Faint), e.paint(color.Bold)
	w := e.stdout
	fmt.Fprintf(w, "%s %s\n", bold("subscription"), st.SubscriptionID)
	if len(st.ResourceGroups) == 0 {
		fmt.Fprintln(w, dim("  (empty: run a workflow first)"))
	}
	for _, rgKey := range sortedKeys(st.ResourceGroups) {
		rg := st.ResourceGroups[rgKey]
		fmt.Fprintf(w, "└ resource group %s %s\n", bold(rg.Name), dim(rg.Location))
		for _, gKey := range sortedKeys(rg.Galleries) {
			g := rg.Galleries[gKey]
			shared := ""
			if g.CommunityEnabled {
				shared = " community " + bold(g.PublicName())
			}
			fmt.Fprintf(w, "  └ gallery %s %s%s\n", bold(g.Name), dim(g.Location), shared)
			for _, dKey := range sortedKeys(g.Definitions) {
				d := g.Definitions[dKey]
				fmt.Fprintf(w, "    └ definition %s %s\n", bold(d.Name),
					dim(fmt.Sprintf("%s/%s/%s %s %s %s", d.Publisher, d.Offer, d.SKU, d.OSType, d.HyperVGeneration, d.Architecture)))
				for _, vKey := range sortedKeys(d.Versions) {
					v := d.Versions[vKey]
					fmt.Fprintf(w, "      └ version %s %s\n", bold(v.Name), dim(fmt.Sprintf("from %s, exclude_from_latest=%t", v.Source.Kind, v.ExcludeFromLatest)))
					writeRegions(w, "        ", v.Replication, dim)
				}
			}
		}
		for _, vKey := range sortedKeys(rg.VMs) {
			vm := rg.VMs[vKey]
			fmt.Fprintf(w, "  └ vm %s %s\n", bold(vm.Name), dim(vmFacts(vm)))
		}
		for _, dKey := range sortedKeys(rg.Disks) {
			d := rg.Disks[dKey]
			fmt.Fprintf(w, "  └ disk %s %s\n", bold(d.Name), dim(d.Location+" from "+d.SourceImageVersionID))
		}
		for _, iKey := range sortedKeys(rg.Images) {
			img := rg.Images[iKey]
			fmt.Fprintf(w, "  └ managed image %s %s\n", bold(img.Name), dim(img.Location))
		}
		for _, aKey := range sortedKeys(rg.StorageAccounts) {
			sa := rg.StorageAccounts[aKey]
			fmt.Fprintf(w, "  └ storage account %s %s\n", bold(sa.Name), dim(sa.Location))
			for _, cKey := range sortedKeys(sa.Containers) {
				c := sa.Containers[cKey]
				fmt.Fprintf(w, "    └ container %s\n", bold(c.Name))
				for _, bKey := range sortedKeys(c.Blobs) {
					b := c.Blobs[bKey]
					fmt.Fprintf(w, "      └ %s %s\n", b.Name, dim(blobFacts(b.Type, b.Size, b.Digest, b.MD5)))
				}
			}
		}
	}
}

// vmFacts is a VM's line in the state tree: where it runs, its size, the
// image it was made from and its provisioning state; a VM listed here was
// left by a test_vm step that did not finish (imgflow gc deletes it).
func vmFacts(vm *cloud.VM) string {
	facts := fmt.Sprintf("%s %s from %s", vm.Location, vm.Size, imageLabel(vm.ImageID))
	if vm.SecurityType != "" {
		facts += " " + vm.SecurityType
	}
	if vm.ProvisioningState != "" {
		facts += " " + vm.ProvisioningState
	}
	return facts
}

// imageLabel names an image by what identifies it in its group: a gallery
// version as gallery/definition/version, a managed image by its name.
func imageLabel(id string) string {
	rid, err := cloud.ParseResourceID(id)
	switch {
	case err != nil:
		return id
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		return "version " + strings.Join(rid.Names, "/")
	case rid.Is("Microsoft.Compute", "images"):
		return "managed image " + rid.Names[0]
	}
	return id
}

func writeRegions(w io.Writer, indent string, regions []cloud.RegionStatus, dim func(string) string) {
	if len(regions) == 0 {
		return
	}
	parts := make([]string, len(regions))
	for i, r := range regions {
		parts[i] = r.Region + " " + r.State
	}
	n := fmt.Sprintf("%d regions", len(regions))
	if len(regions) == 1 {
		n = "1 region"
	}
	fmt.Fprintf(w, "%s%s %s\n", indent, dim("replicated to "+n+":"), strings.Join(parts, ", "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// blobFacts is a blob's line in the state tree: type, size and what
// identifies its content (the sparse digest, else a Content-MD5).
func blobFacts(typ string, size int64, digest, md5 string) string {
	facts := fmt.Sprintf("%s %d bytes", typ, size)
	switch {
	case digest != "":
		facts += " " + digest
	case md5 != "":
		facts += " md5 " + md5
	}
	return facts
}
