package guest

import (
	"bytes"
	"testing"

	"github.com/imgflow/imgflow/cloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sampleGuest() *GuestContent {
	return &GuestContent{
		Files: map[string]GuestFile{
			"/opt/azure/containers/provision_configs.sh": {Mode: "0744", Size: 12, Text: "#!/bin/bash\n"},
			"/etc/tmpfiles.d/aks-mglru.conf":             {Mode: "0644", Size: 40, Text: "w! /sys/kernel/mm/lru_gen/enabled - - - - 0\n"},
		},
		Packages:  map[string]string{"bcc": "0.29.0"},
		UsedBytes: 30 << 20,
	}
}

func TestGuestContentRoundTrip(t *testing.T) {
	g := sampleGuest()
	data, err := EncodeGuestContent(g)
	require.NoError(t, err)
	// The record is read from a fixed-size window: trailing zeros follow it.
	got, err := DecodeGuestContent(append(data, make([]byte, 4096)...))
	require.NoError(t, err)
	assert.Equal(t, g, got)

	_, err = DecodeGuestContent(make([]byte, 4096))
	assert.ErrorIs(t, err, ErrNoGuestContent, "a disk without a record (all zeros)")
	_, err = DecodeGuestContent(append(append([]byte(nil), guestMagic...), "999\n{}"...))
	assert.ErrorContains(t, err, "damaged")
}

// ReadGuestContent reads the record at its offset in a disk, however much
// room the disk leaves after it, and tells a disk without one.
func TestReadGuestContent(t *testing.T) {
	g := sampleGuest()
	data, err := EncodeGuestContent(g)
	require.NoError(t, err)
	for name, tail := range map[string]int{"record at the end": 0, "zeros after it": 1 << 20} {
		disk := make([]byte, GuestContentOffset+len(data)+tail)
		copy(disk[GuestContentOffset:], data)
		got, err := ReadGuestContent(bytes.NewReader(disk))
		require.NoError(t, err, name)
		assert.Equal(t, g, got, name)
	}
	_, err = ReadGuestContent(bytes.NewReader(make([]byte, 2*GuestContentOffset)))
	assert.ErrorIs(t, err, ErrNoGuestContent, "a disk without a record")
	_, err = ReadGuestContent(bytes.NewReader(make([]byte, 512)))
	assert.ErrorIs(t, err, ErrNoGuestContent, "a disk shorter than the offset")
	truncated := make([]byte, GuestContentOffset+len(data)-1)
	copy(truncated[GuestContentOffset:], data)
	_, err = ReadGuestContent(bytes.NewReader(truncated))
	assert.ErrorContains(t, err, "damaged", "a record cut short")
}

func TestGuestCheckEval(t *testing.T) {
	g := sampleGuest()
	const disk = 100 << 20
	cases := []struct {
		check cloud.GuestCheck
		ok    bool
		msg   string
	}{
		{cloud.GuestCheck{Kind: cloud.GuestFileExists, Path: "/etc/tmpfiles.d/aks-mglru.conf"}, true, "present"},
		{cloud.GuestCheck{Kind: cloud.GuestFileExists, Path: "/nope"}, false, "/nope: missing"},
		{cloud.GuestCheck{Kind: cloud.GuestFileAbsent, Path: "/etc/tmpfiles.d/aks-mglru.conf"}, false, "present, want absent"},
		{cloud.GuestCheck{Kind: cloud.GuestFileMode, Path: "/opt/azure/containers/provision_configs.sh", Mode: "0744"}, true, "mode 0744"},
		{cloud.GuestCheck{Kind: cloud.GuestFileMode, Path: "/etc/tmpfiles.d/aks-mglru.conf", Mode: "0744"}, false, "mode 0644, want 0744"},
		{cloud.GuestCheck{Kind: cloud.GuestFileContains, Path: "/etc/tmpfiles.d/aks-mglru.conf", Text: "lru_gen/enabled"}, true, "contains"},
		{cloud.GuestCheck{Kind: cloud.GuestFileContains, Path: "/etc/tmpfiles.d/aks-mglru.conf", Text: "lru_gen/min_ttl_ms"}, false, "does not contain"},
		{cloud.GuestCheck{Kind: cloud.GuestPackageVersion, Package: "bcc", Version: "0.29.0"}, true, "bcc: version 0.29.0"},
		{cloud.GuestCheck{Kind: cloud.GuestPackageVersion, Package: "bcc", Version: "0.24.0"}, false, "version 0.29.0, want 0.24.0"},
		{cloud.GuestCheck{Kind: cloud.GuestPackageVersion, Package: "trivy", Version: "1"}, false, "not installed"},
		{cloud.GuestCheck{Kind: cloud.GuestDiskUsedBelow, Percent: 50}, true, "disk used 30%"},
		{cloud.GuestCheck{Kind: cloud.GuestDiskUsedBelow, Percent: 30}, false, "disk used 30%, want below 30%"},
	}
	for _, c := range cases {
		require.NoError(t, c.check.Validate())
		ok, msg := Eval(c.check, g, disk)
		assert.Equal(t, c.ok, ok, "%+v: %s", c.check, msg)
		assert.Contains(t, msg, c.msg)
	}
}

func TestGuestCheckValidate(t *testing.T) {
	assert.ErrorContains(t, cloud.GuestCheck{Kind: "file_size"}.Validate(), "unknown guest check kind")
	assert.ErrorContains(t, cloud.GuestCheck{Kind: cloud.GuestFileMode, Path: "/x", Mode: "744"}.Validate(), "4 octal digits")
	assert.ErrorContains(t, cloud.GuestCheck{Kind: cloud.GuestFileContains, Path: "/x"}.Validate(), "needs text")
	assert.ErrorContains(t, cloud.GuestCheck{Kind: cloud.GuestDiskUsedBelow}.Validate(), "1 to 100")
}

func TestSimulateRunCommand(t *testing.T) {
	g := sampleGuest()
	res := SimulateRunCommand([]cloud.GuestCheck{
		{Kind: cloud.GuestFileMode, Path: "/opt/azure/containers/provision_configs.sh", Mode: "0744"},
		{Kind: cloud.GuestFileExists, Path: "/opt/azure/containers/cse_config_gpu.sh"},
	}, g, 1<<30)
	assert.Equal(t, cloud.RunSucceeded, res.ExecutionState, "the script ran: its failure is the exit code")
	assert.Equal(t, 1, res.ExitCode)
	assert.False(t, res.Passed())
	assert.Equal(t, "/opt/azure/containers/provision_configs.sh: mode 0744\n", res.Output)
	assert.Equal(t, "/opt/azure/containers/cse_config_gpu.sh: missing\n", res.Error)

	res = SimulateRunCommand([]cloud.GuestCheck{{Kind: cloud.GuestPackageVersion, Package: "bcc", Version: "0.29.0"}}, g, 1<<30)
	assert.True(t, res.Passed())
}

// TestNotRunSaysWhatDidNotRun: a script no simulation can run is
// simulated by not_run predicates, each holding and printing its text, so
// the simulated output names every part that did not run.
func TestNotRunSaysWhatDidNotRun(t *testing.T) {
	checks := []cloud.GuestCheck{
		{Kind: cloud.GuestNotRun, Text: "testFips: not run (simulated)"},
		{Kind: cloud.GuestNotRun, Text: "testChrony: not run (simulated)"},
	}
	for _, c := range checks {
		require.NoError(t, c.Validate())
	}
	res := SimulateRunCommand(checks, &GuestContent{}, 0)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, "testFips: not run (simulated)\ntestChrony: not run (simulated)\n", res.Output)
	assert.Empty(t, res.Error)
	assert.ErrorContains(t, cloud.GuestCheck{Kind: cloud.GuestNotRun}.Validate(), "needs text")
}
