package azrules

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
)

func TestVMRules(t *testing.T) {
	assert.ErrorContains(t, CheckVMSize("vm", ""), "hardwareProfile.vmSize")
	assert.NoError(t, CheckVMSize("vm", "Standard_D2ds_v5"))

	assert.ErrorContains(t, CheckVMSecurity("vm", "TrustedLaunch", "img", cloud.HyperVGenV1), "requires a Hyper-V generation V2 image")
	assert.NoError(t, CheckVMSecurity("vm", "TrustedLaunch", "img", cloud.HyperVGenV2))
	assert.NoError(t, CheckVMSecurity("vm", "", "img", cloud.HyperVGenV1))

	assert.ErrorContains(t, CheckVMImageLocation("vm", "img", "westus", "eastus"), "a VM in eastus cannot use it")
	assert.NoError(t, CheckVMImageLocation("vm", "img", "eastus", "EastUS"))
}
