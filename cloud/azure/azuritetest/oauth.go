package azuritetest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Options.OAuth starts Azurite as Azure Storage is reached with an Entra
// ID token: over HTTPS, with a certificate made for the instance, bearer
// tokens accepted (Azurite's "--oauth basic" checks a token's audience,
// issuer and times, not its signature) and user delegation keys served.
// Its accounts are reached production-style, at
// https://<account>.blob.localhost:<port> (AccountEndpoint, through
// HTTPClient): the SDK takes the account's name from the host's first
// label when it signs a user delegation SAS, so an IP-style URL would
// sign for the wrong account.

// accountHostSuffix ends the host of a production-style account endpoint.
const accountHostSuffix = ".blob.localhost"

// oauthArgs makes the instance's certificate in dir and returns Azurite's
// arguments for HTTPS and OAuth, and the pool that trusts the certificate.
func oauthArgs(dir string) ([]string, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "azurite"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		DNSNames:     []string{"*" + accountHostSuffix, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPath, keyPath := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return []string{"--oauth", "basic", "--cert", certPath, "--key", keyPath}, pool, nil
}

// HTTPClient reaches the instance: it trusts an OAuth instance's
// certificate and connects a production-style account host to it.
func (s *Server) HTTPClient() *http.Client {
	addr := ""
	if u, err := url.Parse(s.URL); err == nil {
		addr = u.Host
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr.DialContext = func(ctx context.Context, network, hostPort string) (net.Conn, error) {
		if host, _, err := net.SplitHostPort(hostPort); err == nil && strings.HasSuffix(host, accountHostSuffix) {
			hostPort = addr
		}
		return dialer.DialContext(ctx, network, hostPort)
	}
	return &http.Client{Transport: tr}
}

// AccountEndpoint is an account's blob endpoint as Azure Storage names
// it, https://<account>.blob.localhost:<port> on an OAuth instance (see
// Options.OAuth); Endpoint otherwise.
func (s *Server) AccountEndpoint(account string) string {
	if s.roots == nil {
		return s.Endpoint(account)
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return s.Endpoint(account)
	}
	return "https://" + account + accountHostSuffix + ":" + u.Port()
}

// TokenCredential hands out tokens an OAuth instance accepts: a JWT for
// Azure Storage's audience from an Entra ID issuer, unsigned. ObjectID
// and TenantID are the principal's (user delegation keys name them).
type TokenCredential struct {
	ObjectID, TenantID string
}

// GetToken implements azcore.TokenCredential.
func (c TokenCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	now := time.Now()
	claims, err := json.Marshal(map[string]any{
		"aud": "https://storage.azure.com", "iss": "https://sts.windows.net/" + c.TenantID + "/",
		"oid": c.ObjectID, "tid": c.TenantID,
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	})
	if err != nil {
		return azcore.AccessToken{}, err
	}
	enc := base64.RawURLEncoding.EncodeToString
	token := enc([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + enc(claims) + "." + enc([]byte("unsigned"))
	return azcore.AccessToken{Token: token, ExpiresOn: now.Add(time.Hour)}, nil
}
