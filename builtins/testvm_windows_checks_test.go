package builtins

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
)

// A Windows VM's run commands run PowerShell: a bash check (lib/checks.star
// writes #!/bin/bash) is refused before any VM boots; on Linux it runs.
func TestABashCheckForAWindowsImageIsRefused(t *testing.T) {
	bash := []vmCheck{{name: "kubeadm-version", script: "#!/bin/bash\nkubeadm version\n"}}
	ps := []vmCheck{{name: "containerd-service", script: "# imgflow check containerd-service\nGet-Service containerd\n"}}
	err := checkScriptsFor(cloud.OSTypeWindows, bash)
	assert.ErrorContains(t, err, "check kubeadm-version is a shell script (#!/bin/bash) but the image is Windows")
	assert.NoError(t, checkScriptsFor(cloud.OSTypeWindows, ps))
	assert.NoError(t, checkScriptsFor(cloud.OSTypeLinux, bash))
}
