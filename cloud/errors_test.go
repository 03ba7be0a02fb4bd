package cloud

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatusOf(t *testing.T) {
	for code, status := range map[string]int{
		CodeResourceGroupNotFound:               http.StatusNotFound,
		CodeResourceNotFound:                    http.StatusNotFound,
		CodeParentResourceNotFound:              http.StatusNotFound,
		CodeSubscriptionNotFound:                http.StatusNotFound,
		CodeBlobNotFound:                        http.StatusNotFound,
		CodeContainerNotFound:                   http.StatusNotFound,
		CodeCannotVerifyCopySource:              http.StatusNotFound,
		CodeConflict:                            http.StatusConflict,
		CodePropertyChangeNotAllowed:            http.StatusConflict,
		CodeBlobAlreadyExists:                   http.StatusConflict,
		CodeOperationNotAllowed:                 http.StatusConflict,
		CodeInvalidResourceGroupLocation:        http.StatusConflict,
		CodeInvalidResourceLocation:             http.StatusConflict,
		CodeStorageAccountAlreadyTaken:          http.StatusConflict,
		CodeInvalidParameter:                    http.StatusBadRequest,
		CodeLocationNotAvailableForResourceType: http.StatusBadRequest,
		CodeAuthenticationFailed:                http.StatusForbidden,
		CodeAuthorizationPermissionMismatch:     http.StatusForbidden,
		CodeInvalidRange:                        http.StatusRequestedRangeNotSatisfiable,
		CodeReplicationFailed:                   http.StatusInternalServerError,
		CodeGalleryImageNotFound:                http.StatusNotFound,
		CodeGalleryNotFound:                     http.StatusNotFound,
		"NoSuchCode":                            0,
	} {
		assert.Equal(t, status, StatusOf(code), code)
	}
	err := Errorf(CodeInvalidParameter, "/id", "bad %s", "x")
	assert.Equal(t, &Error{StatusCode: http.StatusBadRequest, Code: CodeInvalidParameter, Resource: "/id", Message: "bad x"}, err)
}

func TestSameSource(t *testing.T) {
	const blob = "https://acct.blob.core.windows.net/vhds/a.vhd"
	const img = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/images/img"
	vhd := func(uri, account string) ImageSource {
		return ImageSource{Kind: SourceVHD, URI: uri, StorageAccountID: account}
	}
	for name, tc := range map[string]struct {
		a, b ImageSource
		same bool
	}{
		"identical":             {vhd(blob, ""), vhd(blob, ""), true},
		"another SAS":           {vhd(blob+"?sig=a", ""), vhd(blob+"?sig=b", ""), true},
		"account case":          {vhd(blob, ""), vhd("https://ACCT.blob.core.windows.net/vhds/a.vhd", ""), true},
		"blob name case":        {vhd(blob, ""), vhd("https://acct.blob.core.windows.net/vhds/A.vhd", ""), false},
		"other blob":            {vhd(blob, ""), vhd("https://acct.blob.core.windows.net/vhds/b.vhd", ""), false},
		"storage account id":    {vhd(blob, "/x/acct"), vhd(blob, "/X/ACCT"), true},
		"other storage account": {vhd(blob, "/x/acct"), vhd(blob, ""), false},
		"id case":               {ImageSource{Kind: SourceManagedImage, ID: img}, ImageSource{Kind: SourceManagedImage, ID: "/SUBSCRIPTIONS/s/resourceGroups/RG/providers/Microsoft.Compute/images/img"}, true},
		"kind":                  {ImageSource{Kind: SourceManagedImage, ID: img}, ImageSource{Kind: SourceImageVersion, ID: img}, false},
		"unparsable, different": {vhd("not a url", ""), vhd("not a url either", ""), false},
	} {
		assert.Equal(t, tc.same, SameSource(tc.a, tc.b), name)
		assert.Equal(t, tc.same, SameSource(tc.b, tc.a), name+" (swapped)")
	}
}

func TestPrivateOnlySecurityType(t *testing.T) {
	for _, tc := range []struct {
		features map[string]string
		want     string
	}{
		{map[string]string{"SecurityType": "TrustedLaunch"}, "TrustedLaunch"},
		{map[string]string{"securityType": "confidentialVM"}, "confidentialVM"},
		{map[string]string{"SecurityType": "TrustedLaunchSupported"}, ""},
		{map[string]string{"SecurityType": "TrustedLaunchAndConfidentialVmSupported"}, ""},
		{map[string]string{"Other": "TrustedLaunch"}, ""},
		{nil, ""},
	} {
		got, bad := PrivateOnlySecurityType(tc.features)
		assert.Equal(t, tc.want, got, "%v", tc.features)
		assert.Equal(t, tc.want != "", bad, "%v", tc.features)
	}
}
