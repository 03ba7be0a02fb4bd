package builtins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/journal"
)

// Journal is what a run needs of its journal: journaled steps to replay,
// and somewhere to record new ones (interp/journal implements it).
type Journal interface {
	// Lookup returns the journaled step for key, if the run may reuse it.
	Lookup(key string) (*journal.Step, bool)
	// RecordStep durably appends a finished step.
	RecordStep(s journal.Step) error
	// CleanupDone reports whether a cleanup already ran in an earlier attempt.
	CleanupDone(id string) bool
	// RecordCleanupDone durably notes that a cleanup ran.
	RecordCleanupDone(id string) error
	// RecordCleanup durably notes a cleanup the moment it is registered.
	RecordCleanup(c journal.Cleanup) error
	// Pending are the cleanups earlier attempts registered and never ran.
	Pending() []journal.Cleanup
	// PastGate reports whether an earlier attempt stopped at a gate.
	PastGate() bool
}

// StepKey identifies a builtin call by its name and canonical arguments
// (JSON with sorted keys), so a resumed run recognises the same call.
func StepKey(builtin string, args map[string]any) string {
	data, err := json.Marshal(args) // maps marshal with sorted keys
	if err != nil {
		data = []byte(fmt.Sprint(args))
	}
	sum := sha256.Sum256(append([]byte(builtin+"\x00"), data...))
	return builtin + ":" + hex.EncodeToString(sum[:12])
}

// CleanupFunc undoes a temporary resource; args come from the journal on
// resume, so they are JSON-like values.
type CleanupFunc func(ctx context.Context, p cloud.Provider, args map[string]any) error

// deleters delete one kind of temporary resource from JSON-like args (a
// journal keeps them), returning the provider's error as it is. delete()
// and the cleanups of temporary resources both use them.
func deleters() map[string]CleanupFunc {
	str := func(args map[string]any, k string) string { s, _ := args[k].(string); return s }
	return map[string]CleanupFunc{
		"delete_managed_image": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			return p.DeleteManagedImage(ctx, str(a, "resource_group"), str(a, "name"))
		},
		"delete_image_version": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			return p.DeleteImageVersion(ctx, str(a, "resource_group"), str(a, "gallery"), str(a, "definition"), str(a, "version"))
		},
		"delete_image_definition": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			return p.DeleteImageDefinition(ctx, str(a, "resource_group"), str(a, "gallery"), str(a, "name"))
		},
		"delete_blob": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			ref := cloud.BlobRef{Account: str(a, "account"), Container: str(a, "container"), Name: str(a, "name"), Endpoint: str(a, "endpoint")}
			return p.DeleteBlob(ctx, ref)
		},
	}
}

// cleanupKinds are the cleanups builtins register for temporary resources.
// Each is idempotent: a resource already gone is not an error.
func cleanupKinds() map[string]CleanupFunc {
	str := func(args map[string]any, k string) string { s, _ := args[k].(string); return s }
	ignoreMissing := func(err error) error {
		if cloud.IsNotFound(err) {
			return nil
		}
		return err
	}
	kinds := map[string]CleanupFunc{
		"revoke_disk_access": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			return ignoreMissing(p.RevokeDiskAccess(ctx, str(a, "resource_group"), str(a, "name")))
		},
		"delete_packer_resource_group": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			// A group packer announced it created for its build and did
			// not get to delete (see packerTemporaryGroups).
			return ignoreMissing(p.DeleteResourceGroup(ctx, str(a, "resource_group")))
		},
		"delete_disk": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			// A disk with open access cannot be deleted; the revoke may not
			// have been registered yet when the grant's step died.
			if err := ignoreMissing(p.RevokeDiskAccess(ctx, str(a, "resource_group"), str(a, "name"))); err != nil {
				return err
			}
			return ignoreMissing(p.DeleteDisk(ctx, str(a, "resource_group"), str(a, "name")))
		},
	}
	kinds["delete_unfinished_export"] = deleteUnfinishedExport
	maps.Copy(kinds, vmCleanupKinds())
	for kind, del := range deleters() {
		kinds[kind] = func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			return ignoreMissing(del(ctx, p, a))
		}
	}
	return kinds
}

// AddCleanup registers the cleanup of a temporary resource this call made.
// It runs when the workflow ends, and is journaled with the step so a
// resumed run still runs it.
func (c *Call) AddCleanup(kind, name string, args map[string]any) error {
	_, err := c.addCleanup(kind, name, args)
	return err
}

// addCleanup is AddCleanup, returning the cleanup's id for
// dischargeCleanup.
func (c *Call) addCleanup(kind, name string, args map[string]any) (string, error) {
	if _, ok := c.Run.Registry.cleanupKinds[kind]; !ok {
		return "", fmt.Errorf("internal error: unknown cleanup kind %q", kind)
	}
	spec := journal.Cleanup{Kind: kind, Name: name, Pos: c.Pos(), Args: args}
	spec.ID = fmt.Sprintf("%s#%d", c.stepKeyOrPos(), len(c.cleanups))
	c.cleanups = append(c.cleanups, spec)
	if c.Run.Journal != nil {
		if err := c.Run.Journal.RecordCleanup(spec); err != nil {
			return "", err
		}
	}
	c.Run.PushCleanup(c.Run.cleanupFromSpec(spec))
	return spec.ID, nil
}

// dischargeCleanup settles a cleanup this call registered whose resource
// went another way (packer deleted its own resource group): journaled as
// done, so neither this run, a resume nor gc runs it, and dropped.
func (c *Call) dischargeCleanup(id string) error {
	if c.Run.Journal != nil {
		if err := c.Run.Journal.RecordCleanupDone(id); err != nil {
			return err
		}
	}
	c.Run.dropCleanup(id)
	return nil
}

// RestoreCleanups registers the cleanups earlier attempts of the run left
// pending, so a resumed run finishes them even if it no longer reaches the
// step that made the resource. They go first: they run last.
func (r *Run) RestoreCleanups() {
	if r.Journal == nil {
		return
	}
	for _, spec := range r.Journal.Pending() {
		r.PushCleanup(r.cleanupFromSpec(spec))
	}
}

func (c *Call) stepKeyOrPos() string {
	if c.key != "" {
		return c.key
	}
	return c.Spec.Name + "@" + c.Pos()
}

// keptWhenInterrupted is what a journaled cleanup of the workflow's own
// cleanup() (an id of starlarkCleanupID) deletes, restored on resume: kept
// again if this attempt is interrupted too. "" for a builtin's cleanup.
func keptWhenInterrupted(spec journal.Cleanup) string {
	if !strings.HasPrefix(spec.ID, starlarkCleanupPrefix) {
		return ""
	}
	return strings.TrimPrefix(spec.Name, "delete ")
}

// cleanupFromSpec turns a journaled cleanup into a runnable one.
func (r *Run) cleanupFromSpec(spec journal.Cleanup) Cleanup {
	fn := r.Registry.cleanupKinds[spec.Kind]
	return Cleanup{
		ID: spec.ID, Name: spec.Name, Pos: spec.Pos,
		// A workflow's cleanup() (an id of starlarkCleanupID), restored
		// on resume: kept again if this attempt is interrupted too.
		KeepWhenInterrupted: keptWhenInterrupted(spec),
		Fn: func(ctx context.Context, _ *starlark.Thread) error {
			if fn == nil {
				return fmt.Errorf("unknown cleanup kind %q in the journal", spec.Kind)
			}
			p, err := cleanupProvider(ctx, r.Provider, r.Subscriptions, spec.Args)
			if err != nil {
				return err
			}
			return fn(ctx, p, spec.Args)
		},
	}
}

// replay returns a journaled step's result without calling the cloud, and
// re-registers the cleanups that step had registered.
func (c *Call) replay(rec *journal.Step) (starlark.Value, error) {
	v, err := DecodeValue(rec.Result)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Spec.Name, err)
	}
	for _, spec := range rec.Cleanups {
		c.Run.PushCleanup(c.Run.cleanupFromSpec(spec))
	}
	c.Report(cloud.Outcome("replayed"), "from the journal ("+rec.Outcome+" earlier)")
	return v, nil
}

// RunCleanup runs a journaled cleanup against p, outside any run (imgflow
// gc finishing what a dead run left).
func (r *Registry) RunCleanup(ctx context.Context, p cloud.Provider, c journal.Cleanup) error {
	return r.RunCleanupIn(ctx, p, nil, c)
}

// RunCleanupIn is RunCleanup for a target that reaches other
// subscriptions: a cleanup of a resource in one of them runs there.
func (r *Registry) RunCleanupIn(ctx context.Context, p cloud.Provider, subs Subscriptions, c journal.Cleanup) error {
	fn, ok := r.cleanupKinds[c.Kind]
	if !ok {
		return fmt.Errorf("unknown cleanup kind %q", c.Kind)
	}
	p, err := cleanupProvider(ctx, p, subs, c.Args)
	if err != nil {
		return err
	}
	return fn(ctx, p, c.Args)
}
