package azure

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/imgflow/imgflow/internal/redact"
)

// ContainerClient returns a client of the blob container at containerURL
// (https://ACCOUNT.blob.core.windows.net/CONTAINER, or an emulator's
// http://HOST:PORT/ACCOUNT/CONTAINER), authenticated as the provider's own
// blob calls are: a SAS in the URL is used as it is; otherwise
// Options.StorageAuth decides (aad: the token; key: the key from
// ListKeys; auto: the token, or the key when the token has no blob data
// role), or Options.StorageKey (emulators, tests). It lets other parts of
// imgflow that keep data in blobs (run journals) share one client
// construction, credential and redaction. Checking the access may make
// requests (a probe, ListKeys); errors never show a SAS.
func (p *Provider) ContainerClient(ctx context.Context, containerURL string) (*container.Client, error) {
	shown := redact.URL(containerURL)
	u, err := url.Parse(containerURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s is not a blob container URL: want https://ACCOUNT.blob.core.windows.net/CONTAINER", shown)
	}
	parts, err := blob.ParseURL(containerURL)
	if err != nil || parts.ContainerName == "" || parts.BlobName != "" {
		return nil, fmt.Errorf("%s is not a blob container URL: want https://ACCOUNT.blob.core.windows.net/CONTAINER", shown)
	}
	opts := (*container.ClientOptions)(p.blobOptions())
	if parts.SAS.Signature() != "" {
		return container.NewClientWithNoCredential(containerURL, opts)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("%s: the query of a container URL can only be a SAS", shown)
	}
	account := parts.IPEndpointStyleInfo.AccountName
	if account == "" && net.ParseIP(u.Hostname()) == nil {
		account, _, _ = strings.Cut(u.Hostname(), ".")
	}
	if account == "" {
		return nil, fmt.Errorf("%s names no storage account", shown)
	}
	endpoint := strings.TrimSuffix(strings.TrimRight(containerURL, "/"), "/"+parts.ContainerName)
	cred, err := p.blobCredential(ctx, account, endpoint)
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if u.Scheme == "http" {
			opts.InsecureAllowCredentialWithHTTP = true // an emulator
		}
		return container.NewClientWithSharedKeyCredential(containerURL, cred, opts)
	}
	if u.Scheme != "https" && !opts.InsecureAllowCredentialWithHTTP {
		return nil, fmt.Errorf("%s: a token is only sent over https (an emulator's http URL takes a SAS or its key)", shown)
	}
	return container.NewClient(containerURL, p.cred, opts)
}
