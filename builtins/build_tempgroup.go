package builtins

import (
	"errors"
	"fmt"
	"sync"

	"github.com/imgflow/imgflow/packer"
)

// packerTemporaryGroups keeps packer's own cleanup honest. The azure-arm
// builder creates a temporary resource group for its build VM and deletes
// it when the build ends, on success, failure or SIGINT; a packer killed
// first (after the Runner's KillGrace, or with imgflow) leaves the group
// and its VM running and billed. So the moment packer says it created a
// group, a journaled cleanup to delete it is registered; once packer says
// it deleted the group (or started to, with async_resourcegroup_delete)
// the cleanup is discharged. What is left runs with the run's cleanups,
// on resume or by imgflow gc. Groups packer reuses
// (build_resource_group_name) are never touched.
type packerTemporaryGroups struct {
	c *Call

	mu   sync.Mutex
	ids  map[string]string // build → cleanup id
	errs []error
}

// note is packer.BuildRequest.OnTemporaryResourceGroup; it runs on the
// goroutine reading packer's output while the Call's goroutine waits for
// the build.
func (g *packerTemporaryGroups) note(build, group string) {
	id, err := g.c.addCleanup("delete_packer_resource_group",
		fmt.Sprintf("delete resource group %s, which packer build %s created and did not delete", group, build),
		map[string]any{"resource_group": group, "build": build})
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.errs = append(g.errs, fmt.Errorf("note packer's temporary resource group %s: %w", group, err))
		return
	}
	if g.ids == nil {
		g.ids = map[string]string{}
	}
	g.ids[build] = id
}

// settle discharges the cleanups of the groups packer deleted itself, and
// returns any error noting or discharging them.
func (g *packerTemporaryGroups) settle(res *packer.Result) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if res != nil {
		for _, b := range res.Builds {
			id, ok := g.ids[b.Name]
			if !ok || !b.TemporaryResourceGroupDeleted {
				continue
			}
			if err := g.c.dischargeCleanup(id); err != nil {
				g.errs = append(g.errs, err)
			}
		}
	}
	return errors.Join(g.errs...)
}
