package azsim

import "github.com/imgflow/imgflow/cloud"

// authenticationFailed is Storage's 403 for a SAS it refuses; resource
// must not carry the SAS.
func authenticationFailed(resource, detail string) error {
	return cloud.Errorf(cloud.CodeAuthenticationFailed, resource, "%s",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature. "+detail)
}
