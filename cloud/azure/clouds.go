package azure

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azcloud "github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"

	"github.com/imgflow/imgflow/cloud"
)

// Cloud is an Azure cloud (--cloud): its ARM endpoint and token audience
// and Entra ID authority (azcore's configuration), its storage suffix,
// and the name packer-plugin-azure's cloud_environment_name takes.
type Cloud struct {
	// Name is how imgflow spells it: AzurePublic, AzureUSGovernment or
	// AzureChina.
	Name string
	// Config is azcore's configuration of the cloud.
	Config azcloud.Configuration
	// StorageSuffix ends every storage account's host
	// (<account>.blob.<suffix>).
	StorageSuffix string
	// PackerName is the cloud's packer cloud_environment_name.
	PackerName string
	// aliases are the other spellings ParseCloud accepts (folded: lower
	// case, without - _ and spaces).
	aliases []string
}

// Clouds are the clouds --cloud reaches.
var Clouds = []Cloud{
	{Name: "AzurePublic", Config: azcloud.AzurePublic, StorageSuffix: cloud.PublicStorageSuffix, PackerName: "Public",
		aliases: []string{"public", "azurecloud", "azurepubliccloud", "azure"}},
	{Name: "AzureUSGovernment", Config: azcloud.AzureGovernment, StorageSuffix: "core.usgovcloudapi.net", PackerName: "USGovernment",
		aliases: []string{"usgovernment", "usgov", "azuregovernment", "azureusgovernmentcloud", "azureusgov", "government"}},
	{Name: "AzureChina", Config: azcloud.AzureChina, StorageSuffix: "core.chinacloudapi.cn", PackerName: "China",
		aliases: []string{"china", "azurechinacloud", "mooncake"}},
}

// ParseCloud finds a cloud by name, in any of its common spellings
// (AzureUSGovernment, usgov, AzureUSGovernmentCloud as the Azure CLI
// names it, …); "" is AzurePublic.
func ParseCloud(s string) (Cloud, error) {
	f := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	if f == "" {
		return Clouds[0], nil
	}
	names := make([]string, len(Clouds))
	for i, c := range Clouds {
		names[i] = c.Name
		if f == strings.ToLower(c.Name) {
			return c, nil
		}
		for _, a := range c.aliases {
			if f == a {
				return c, nil
			}
		}
	}
	return Cloud{}, fmt.Errorf("cloud %q: use %s", s, strings.Join(names, ", "))
}

// BlobEndpoint is an account's blob endpoint in the cloud.
func (c Cloud) BlobEndpoint(account string) string {
	return cloud.BlobEndpointIn(account, c.suffix())
}

func (c Cloud) suffix() string {
	if c.StorageSuffix == "" {
		return cloud.PublicStorageSuffix
	}
	return c.StorageSuffix
}

// withCloud is opts with the cloud's configuration, unless opts name a
// cloud of their own (a fake's endpoint).
func withCloud(opts *arm.ClientOptions, c Cloud) *arm.ClientOptions {
	var o arm.ClientOptions
	if opts != nil {
		o = *opts
	}
	if c.Name != "" && o.Cloud.ActiveDirectoryAuthorityHost == "" && len(o.Cloud.Services) == 0 {
		o.Cloud = c.Config
	}
	return &o
}
