package builtins

import (
	"context"
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
)

// Scans' reports. Azure's run command instance view keeps the last 4 KB
// of a script's output; a scan's report (trivy's JSON, the CIS
// assessment) is larger, so the VM writes its streams to append blobs in
// the reports account, which the provider reads back and deletes. Their
// deletion is also on the cleanup stack, so a run that dies in between
// leaves nothing behind after resume or gc.

// ReportContainer is the container of the reports account that test_vm's
// VMs write scan outputs to; imgflow deletes only blobs in it.
const ReportContainer = "imgflow-testvm"

// guestScan reads a check's scan: the simulated form of a scan, a struct
// (kind, severity, fail_on, level, advisories) as lib/scans.star makes it.
func guestScan(s *starlarkstruct.Struct) (*cloud.GuestScan, error) {
	v, err := s.Attr("scan")
	if err != nil || v == starlark.None {
		return nil, nil
	}
	if _, ok := v.(*starlarkstruct.Struct); !ok {
		return nil, fmt.Errorf("scan: got %s, want struct(kind, …) (lib/scans.star)", v.Type())
	}
	g, err := ToGo(v)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	var scan cloud.GuestScan
	if err := json.Unmarshal(data, &scan); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	if err := scan.Validate(); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	return &scan, nil
}

// firstScan names the first check that is a scan ("" when none is).
func firstScan(checks []vmCheck) string {
	for _, ch := range checks {
		if ch.scan != nil {
			return ch.name
		}
	}
	return ""
}

// reportBlobs gives cmd its output and error blobs in the reports
// account, <vm>/<check>.stdout and .stderr, after making their container
// and registering their deletion.
func (c *Call) reportBlobs(ctx context.Context, reports *starlarkstruct.Struct, vmName string, cmd *cloud.RunCommand) error {
	account := attrString(reports, "name")
	ref := cloud.BlobRef{Account: account, Container: ReportContainer}
	if ep := attrString(reports, "blob_endpoint"); ep != "" && ep != cloud.DefaultBlobEndpoint(account) {
		ref.Endpoint = ep
	}
	if err := c.Run.Provider.EnsureContainer(ctx, account, ReportContainer); err != nil {
		return fmt.Errorf("create container %s for the reports: %w", ReportContainer, err)
	}
	out, errs := ref, ref
	out.Name, errs.Name = vmName+"/"+cmd.Name+".stdout", vmName+"/"+cmd.Name+".stderr"
	args := map[string]any{"account": account, "endpoint": ref.Endpoint, "container": ReportContainer, "blobs": []any{out.Name, errs.Name}}
	if err := c.AddCleanup("delete_check_outputs", "delete the output blobs of check "+cmd.Name, args); err != nil {
		return err
	}
	cmd.OutputBlob, cmd.ErrorBlob = &out, &errs
	return nil
}

// deleteCheckOutputs is the cleanup of reportBlobs: the blobs, if still
// there, and only in ReportContainer.
func deleteCheckOutputs(ctx context.Context, p cloud.Provider, a map[string]any) error {
	account, _ := a["account"].(string)
	endpoint, _ := a["endpoint"].(string)
	container, _ := a["container"].(string)
	if container != ReportContainer {
		return fmt.Errorf("refusing to delete blobs in container %q: imgflow deletes only the %s blobs test_vm's checks write", container, ReportContainer)
	}
	blobs, _ := a["blobs"].([]any)
	for _, b := range blobs {
		name, _ := b.(string)
		err := p.DeleteBlob(ctx, cloud.BlobRef{Account: account, Container: container, Name: name, Endpoint: endpoint})
		if err != nil && !cloud.IsNotFound(err) {
			return err
		}
	}
	return nil
}
