package builtins

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
)

// With scans_fail = False, test_vm returns a scan that failed on its
// findings (its script ran to the end and printed its report) and fails
// for every other failure: a check, a scan that broke before printing a
// report, a scan whose run command did not finish.
func TestOnlyAScanWithAReportFailedOnItsFindings(t *testing.T) {
	report := `{"SchemaVersion": 2}`
	for _, tc := range []struct {
		name string
		r    checkResult
		want bool
	}{
		{"scan with its report and fail_on findings", checkResult{name: "trivy", report: true,
			res: &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, ExitCode: 1, Output: report, Error: "CRITICAL CVE-1 in bcc"}}, true},
		{"scan that broke before its report", checkResult{name: "trivy", report: true,
			res: &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, ExitCode: 1, Error: "trivy rootfs failed 5 times"}}, false},
		{"scan that timed out", checkResult{name: "trivy", report: true,
			res: &cloud.RunCommandResult{ExecutionState: cloud.RunTimedOut, Output: report}}, false},
		{"scan that passed", checkResult{name: "trivy", report: true,
			res: &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: report}}, false},
		{"check that failed", checkResult{name: "disk-usage",
			res: &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, ExitCode: 1, Output: "disk used 80%"}}, false},
	} {
		assert.Equal(t, tc.want, tc.r.foundFindings(), tc.name)
	}
}
