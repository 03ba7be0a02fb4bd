package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMarketplaceImageResolvesLatest(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
latest = marketplace_image(publisher = "Canonical", offer = "0001-com-ubuntu-server-jammy", sku = "22_04-lts-gen2", location = "eastus")
pinned = marketplace_image(publisher = "Canonical", offer = "0001-com-ubuntu-server-jammy", sku = "22_04-lts-gen2", location = "eastus", version = "22.04.202607290")
output("latest", latest.version)
output("requested", latest.requested)
output("pinned", pinned.version)
`, nil)
	out := outputsOf(res)
	assert.Equal(t, "22.04.202608140", out["latest"], "the highest version of the simulated marketplace")
	assert.Equal(t, "latest", out["requested"])
	assert.Equal(t, "22.04.202607290", out["pinned"])
}

func TestMarketplaceImageRefusesWhatIsNotListed(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`marketplace_image(publisher = "Canonical", offer = "0001-com-ubuntu-server-jammy", sku = "22_04-lts-gen2", location = "eastus", version = "22.04.201901010")`, nil)
	assert.Contains(t, msg, "no version 22.04.201901010 in eastus (it has 22.04.202607290, 22.04.202608140)")
	assert.Contains(t, msg, "pin a listed version or use latest")
	msg = s.mustFail(`marketplace_image(publisher = "Canonical", offer = "nope", sku = "nope", location = "eastus")`, nil)
	assert.Contains(t, msg, "Canonical:nope:nope")
	assert.Contains(t, msg, "NotFound")
}
