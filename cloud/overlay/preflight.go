package overlay

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// FieldStorageAccountName is the field of the problem Preflight reports
// for a storage account name someone else has; the interpreter adds the
// param that sets it.
const FieldStorageAccountName = "storage account name"

// Preflight checks the writes the dry run recorded against what the base
// target would refuse (a cloud.Preflighter, i.e. the Azure target; on
// others it returns nil): every storage account it would create must
// have a free name (Storage checkNameAvailability), and the caller must
// hold every action the writes need at their scopes (Microsoft.Authorization
// permissions). It returns every problem at once (errors.Join of
// *cloud.ValidationError), so one look before the run shows all that
// needs fixing.
func (p *Provider) Preflight(ctx context.Context) error {
	pf, ok := p.base.(cloud.Preflighter)
	if !ok {
		return nil
	}
	var problems []error
	changes := p.Changes()
	checked := map[string]bool{}
	for _, c := range changes {
		if c.Kind != cloud.KindStorageAccount || c.Op != cloud.OpCreate {
			continue
		}
		rid, err := cloud.ParseResourceID(c.ID)
		if err != nil || len(rid.Names) == 0 {
			continue
		}
		name := rid.Names[len(rid.Names)-1]
		if checked[strings.ToLower(name)] {
			continue
		}
		checked[strings.ToLower(name)] = true
		av, err := pf.StorageAccountNameAvailability(ctx, name)
		if err != nil {
			return fmt.Errorf("check storage account name %s: %w", name, err)
		}
		if !av.Available {
			problems = append(problems, &cloud.ValidationError{Field: FieldStorageAccountName, Value: name,
				Problem: fmt.Sprintf("cannot be created: %s (%s); storage account names are global across Azure", strings.TrimSuffix(av.Message, "."), av.Reason),
				Fix:     "choose a name of your own, 3–24 lowercase letters and digits"})
		}
	}
	perms := map[string][]cloud.Permission{}
	seen := map[string]bool{}
	for _, c := range changes {
		for _, n := range azrules.NeedsOf(p.sub, c, pf.BlobAuth) {
			if n.Account != "" {
				n.Scope = p.accountScope(n.Account)
				if n.Or != nil {
					n.Or.Scope = n.Scope
				}
			}
			if seen[n.Key()] {
				continue
			}
			seen[n.Key()] = true
			got, ok := perms[strings.ToLower(n.Scope)]
			if !ok {
				var err error
				if got, err = pf.Permissions(ctx, n.Scope); err != nil {
					return fmt.Errorf("read permissions at %s: %w", n.Scope, err)
				}
				perms[strings.ToLower(n.Scope)] = got
			}
			if n.Allowed(got) {
				continue
			}
			kind := "action"
			if n.Data {
				kind = "data action"
			}
			fix := fmt.Sprintf("grant the built-in role %q there: %s", n.Role, azrules.RoleCommand(n.Role, n.Scope))
			if n.Or != nil {
				fix += fmt.Sprintf(" (or %q for %s, to use the account key)", n.Or.Role, n.Or.Action)
			}
			problems = append(problems, &cloud.ValidationError{Field: "permission", Value: n.Action,
				Problem: fmt.Sprintf("is not granted at %s: the run needs this %s (%s %s)", n.Scope, kind, c.Op, c.Kind),
				Fix:     fix})
		}
	}
	return errors.Join(problems...)
}

// accountScope is the resource group of a storage account the dry run
// holds, else the subscription.
func (p *Provider) accountScope(account string) string {
	if rg := p.AccountGroup(account); rg != "" {
		return "/subscriptions/" + p.sub + "/resourceGroups/" + rg
	}
	return "/subscriptions/" + p.sub
}
