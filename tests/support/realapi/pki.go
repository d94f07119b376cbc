package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the server's own certificate authority, its serving certificate (for 127.0.0.1, ::1 and localhost,
// signed by that CA, as a cluster's installer makes one) and the key that signs service account tokens; and,
// for the API aggregation layer, a second CA (the front proxy's, which extension API servers trust for the
// X-Remote-* headers) with the client certificate kube-apiserver presents to them.
type PKI struct {
	CAFile          string
	ServingCertFile string
	ServingKeyFile  string
	SAKeyFile       string

	FrontProxyCAFile    string
	ProxyClientCertFile string
	ProxyClientKeyFile  string
}

// The common name of the front proxy's client certificate, the one name --requestheader-allowed-names allows.
const frontProxyClient = "front-proxy-client"

func makePKI(dir string) (PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return PKI{}, err
	}
	p := PKI{
		CAFile:          filepath.Join(dir, "ca.crt"),
		ServingCertFile: filepath.Join(dir, "serving.crt"),
		ServingKeyFile:  filepath.Join(dir, "serving.key"),
		SAKeyFile:       filepath.Join(dir, "service-account.key"),

		FrontProxyCAFile:    filepath.Join(dir, "front-proxy-ca.crt"),
		ProxyClientCertFile: filepath.Join(dir, "front-proxy-client.crt"),
		ProxyClientKeyFile:  filepath.Join(dir, "front-proxy-client.key"),
	}
	now := time.Now()
	caKey, caDER, err := makeCA("realapi-ca", now)
	if err != nil {
		return p, err
	}
	servingKey, servingDER, err := issue(caKey, caDER, now, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.IPv6loopback},
	})
	if err != nil {
		return p, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	frontProxyCAKey, frontProxyCADER, err := makeCA("realapi-front-proxy-ca", now)
	if err != nil {
		return p, err
	}
	proxyClientKey, proxyClientDER, err := issue(frontProxyCAKey, frontProxyCADER, now, &x509.Certificate{
		Subject:     pkix.Name{CommonName: frontProxyClient},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return p, err
	}
	for _, f := range []struct {
		path string
		mode os.FileMode
		pem  []byte
	}{
		{p.CAFile, 0o644, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})},
		{p.ServingCertFile, 0o644, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER})},
		{p.ServingKeyFile, 0o600, ecKeyPEM(servingKey)},
		{p.SAKeyFile, 0o600, ecKeyPEM(saKey)},
		{p.FrontProxyCAFile, 0o644, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: frontProxyCADER})},
		{p.ProxyClientCertFile, 0o644, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxyClientDER})},
		{p.ProxyClientKeyFile, 0o600, ecKeyPEM(proxyClientKey)},
	} {
		if err := os.WriteFile(f.path, f.pem, f.mode); err != nil {
			return p, err
		}
	}
	return p, nil
}

// makeCA makes a self-signed certificate authority named `name`: its key and DER certificate.
func makeCA(name string, now time.Time) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	return key, der, err
}

// issue makes a key and a certificate for it from `template` (its subject, extended key usage and names),
// signed by the CA of `caKey` and `caDER`, valid for a week.
func issue(caKey *ecdsa.PrivateKey, caDER []byte, now time.Time, template *x509.Certificate) (*ecdsa.PrivateKey, []byte, error) {
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	template.SerialNumber = serial()
	template.NotBefore = now.Add(-time.Hour)
	template.NotAfter = now.Add(7 * 24 * time.Hour)
	template.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	der, err := x509.CreateCertificate(rand.Reader, template, ca, &key.PublicKey, caKey)
	return key, der, err
}

func ecKeyPEM(key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err) // a P-256 key always marshals
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n.Add(n, big.NewInt(1))
}
