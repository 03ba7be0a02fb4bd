package azure

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/imgflow/imgflow/cloud"
)

// sasClockSkew backdates a SAS's start, so that a service whose clock is
// a little behind accepts it at once.
const sasClockSkew = 5 * time.Minute

// blobSAS is ref's URL with a SAS granting perms for lifetime, for a
// reader imgflow cannot lend its credential to (a server-side copy's
// source, a VM agent writing run-command output). It is signed with the
// account key when blob calls use one (--storage-auth key, or auto on an
// account that allows it), else with a user delegation key of the token
// credential, the only SAS an account without shared key access accepts.
func (p *Provider) blobSAS(ctx context.Context, ref cloud.BlobRef, perms sas.BlobPermissions, lifetime time.Duration) (string, error) {
	now := time.Now().UTC()
	vals := sas.BlobSignatureValues{
		Protocol:      sas.ProtocolHTTPS,
		StartTime:     now.Add(-sasClockSkew),
		ExpiryTime:    now.Add(lifetime),
		Permissions:   perms.String(),
		ContainerName: ref.Container,
		BlobName:      ref.Name,
	}
	base := ref.URL()
	if strings.HasPrefix(base, "http://") {
		vals.Protocol = sas.ProtocolHTTPSandHTTP // emulators
	}
	cred, err := p.blobCredential(ctx, ref.Account, ref.Endpoint)
	if err != nil {
		return "", err
	}
	var qp sas.QueryParameters
	if cred != nil {
		qp, err = vals.SignWithSharedKey(cred)
	} else {
		qp, err = p.signWithUserDelegation(ctx, ref, vals)
	}
	if err != nil {
		return "", err
	}
	return base + "?" + qp.Encode(), nil
}

// signWithUserDelegation signs vals with a user delegation key asked of
// ref's blob service for the SAS's lifetime.
func (p *Provider) signWithUserDelegation(ctx context.Context, ref cloud.BlobRef, vals sas.BlobSignatureValues) (sas.QueryParameters, error) {
	ep := ref.Endpoint
	if ep == "" {
		ep = p.blobEndpoint(ref.Account)
	}
	svc, err := service.NewClient(ep, p.cred, (*service.ClientOptions)(p.blobOptions()))
	if err != nil {
		return sas.QueryParameters{}, err
	}
	udc, err := svc.GetUserDelegationCredential(ctx, service.KeyInfo{
		Start:  to(vals.StartTime.Format(sas.TimeFormat)),
		Expiry: to(vals.ExpiryTime.Format(sas.TimeFormat)),
	}, nil)
	if err != nil {
		return sas.QueryParameters{}, fmt.Errorf("get a user delegation key of account %s to sign a SAS (needs %q on the account): %w",
			ref.Account, RoleBlobDataContributor, azErr(err, ep))
	}
	return vals.SignWithUserDelegation(udc)
}
