package secrets

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

// authority is the session's CA: its key lives in cordon's memory only,
// and signs a certificate for each host the proxy terminates TLS for.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

func newAuthority() (*authority, error) {
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "cordon session CA " + serial.Text(16)[:8], Organization: []string{"cordon"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, leaves: map[string]*tls.Certificate{},
		pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// newKeyAndSerial makes a certificate's key and a random serial number.
func newKeyAndSerial() (*ecdsa.PrivateKey, *big.Int, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return key, serial, err
}

// CACertPEM is the session CA's certificate, which the sandbox trusts.
func (v *Vault) CACertPEM() []byte { return bytes.Clone(v.ca.pem) }

// Leaf is a certificate for host signed by the session's CA, made once.
func (v *Vault) Leaf(host string) (*tls.Certificate, error) {
	a := v.ca
	host = strings.ToLower(host)
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.leaves[host]; c != nil {
		return c, nil
	}
	key, serial, err := newKeyAndSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     a.cert.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	a.leaves[host] = c
	return c, nil
}

// systemBundles are where distributions keep their root certificates.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt", // Debian, Ubuntu, Alpine, Arch
	"/etc/pki/tls/certs/ca-bundle.crt",   // Fedora, RHEL
	"/etc/ssl/ca-bundle.pem",             // openSUSE
	"/etc/ssl/cert.pem",                  // macOS, Alpine
}

// TrustBundle is what the sandbox's TLS clients trust: the system's roots
// (so that hosts the proxy does not terminate still verify) and the
// session's CA.
func (v *Vault) TrustBundle() []byte {
	var b bytes.Buffer
	for _, p := range systemBundles {
		if data, err := os.ReadFile(p); err == nil {
			b.Write(data)
			if !bytes.HasSuffix(data, []byte("\n")) {
				b.WriteByte('\n')
			}
			break
		}
	}
	b.Write(v.ca.pem)
	return b.Bytes()
}

// TrustEnv points the common TLS clients at bundle, a file holding
// TrustBundle: OpenSSL and curl, Node, Python's requests, git, Deno.
func TrustEnv(bundle string) []string {
	var env []string
	for _, k := range []string{"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
		"GIT_SSL_CAINFO", "DENO_CERT", "PIP_CERT", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "NPM_CONFIG_CAFILE"} {
		env = append(env, k+"="+bundle)
	}
	return env
}
