package azrules

import (
	"strings"
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

func TestVMOSProfilePresence(t *testing.T) {
	assert.NoError(t, CheckVMOSProfilePresence("vm", cloud.OSStateGeneralized, true))
	assert.NoError(t, CheckVMOSProfilePresence("vm", cloud.OSStateSpecialized, false))
	assert.ErrorContains(t, CheckVMOSProfilePresence("vm", cloud.OSStateSpecialized, true), "'osProfile' is not allowed with a specialized image")
	assert.ErrorContains(t, CheckVMOSProfilePresence("vm", cloud.OSStateGeneralized, false), "Required parameter 'osProfile' is missing")
	assert.ErrorContains(t, CheckVMOSProfilePresence("vm", "", false), "Required parameter 'osProfile' is missing", "an image without an OS state is generalized")
}

func TestVMLocationAndNetwork(t *testing.T) {
	err := CheckVMLocation("vm", "")
	var ce *cloud.Error
	if assert.ErrorAs(t, err, &ce) {
		assert.Equal(t, cloud.CodeLocationRequired, ce.Code)
		assert.Equal(t, 400, ce.StatusCode)
	}
	assert.NoError(t, CheckVMLocation("vm", "westus"))

	const vnet = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/myVnet"
	exists := func(id string) bool { return id == strings.ToLower(vnet) }
	nic := func(subnets ...string) []NICConfig { return []NICConfig{{Name: "nic", Subnets: subnets}} }
	assert.NoError(t, CheckVMNetwork("vm", 0, nic(vnet+"/subnets/default"), "2020-11-01", exists))
	assert.NoError(t, CheckVMNetwork("vm", 1, nil, "", exists), "an existing NIC needs no configuration")
	assert.ErrorContains(t, CheckVMNetwork("vm", 0, nil, "", exists), "Required parameter 'networkProfile' is missing")
	assert.ErrorContains(t, CheckVMNetwork("vm", 0, nic(vnet+"/subnets/default"), "", exists), "networkApiVersion is required")
	assert.ErrorContains(t, CheckVMNetwork("vm", 0, nic(""), "2020-11-01", exists), "'ipConfigurations.subnet' is missing")
	for _, subnet := range []string{vnet, vnet + "2/subnets/default"} {
		err := CheckVMNetwork("vm", 0, nic(subnet), "2020-11-01", exists)
		if assert.ErrorAs(t, err, &ce, subnet) {
			assert.Equal(t, cloud.CodeInvalidResourceReference, ce.Code)
			assert.Equal(t, 400, ce.StatusCode)
			assert.Contains(t, ce.Message, "referenced by resource nic was not found")
		}
	}
}

func TestVMOSProfileRules(t *testing.T) {
	win := cloud.OSTypeWindows
	assert.NoError(t, CheckVMOSProfile("vm", win, "testvm-01234", "Abcdefg1!xyz", false, true))
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "testvm-01234", "Abcdefg1!xyz", true, false), "linuxConfiguration' is not allowed for a Windows image")
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "testvm-01234", "", false, true), "Required parameter 'adminPassword'")
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "testvm-01234", "abcdefghijkl", false, true), "3 of password complexity requirements")
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "testvm-01234", "Abcdefg1\x01xyz", false, true), "3 of password complexity requirements")
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "testvm-0123456789", "Abcdefg1!xyz", false, true), "cannot be more than 15 characters")
	assert.ErrorContains(t, CheckVMOSProfile("vm", win, "12345", "Abcdefg1!xyz", false, true), "entirely numeric")
	assert.NoError(t, CheckVMOSProfile("vm", cloud.OSTypeLinux, "testvm-0123456789-long-linux-name", "", true, false))
	assert.ErrorContains(t, CheckVMOSProfile("vm", cloud.OSTypeLinux, "vm", "", false, true), "windowsConfiguration' is not allowed for a Linux image")
}
