package k8stest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is a cluster's certificate authority and the keys it signed, as
// files in dir: what the control plane, the kubelet and the tests' client
// authenticate with.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// identity is a certificate to make: its subject, and its addresses when
// it serves.
type identity struct {
	file   string // file name, without .crt/.key
	cn     string
	org    string
	dns    []string
	ips    []net.IP
	server bool
}

// newPKI makes the authority and every certificate a single-node cluster
// needs, for node at nodeIP.
func newPKI(dir, node string, nodeIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sandbox-k8stest-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, _ := x509.ParseCertificate(der)
	p := &pki{dir: dir, caCert: cert, caKey: key}
	if err := p.write("ca", der, key); err != nil {
		return nil, err
	}
	loop := net.ParseIP("127.0.0.1")
	for i, id := range []identity{
		{file: "apiserver", cn: "kube-apiserver", server: true, ips: []net.IP{loop, net.ParseIP("10.96.0.1"), nodeIP},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{file: "admin", cn: "admin", org: "system:masters"},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", org: "system:masters"},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "kubelet", cn: "system:node:" + node, org: "system:nodes"},
		{file: "kubelet-serving", cn: "system:node:" + node, org: "system:nodes", server: true, ips: []net.IP{loop, nodeIP}, dns: []string{node, "localhost"}},
	} {
		if err := p.issue(id, int64(i+2)); err != nil {
			return nil, err
		}
	}
	// The service accounts' signing key.
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	keyDER, _ := x509.MarshalECPrivateKey(sa)
	pubDER, _ := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	return p, writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pubDER)
}

func (p *pki) issue(id identity, serial int64) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: id.cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames: id.dns, IPAddresses: id.ips}
	if id.org != "" {
		tmpl.Subject.Organization = []string{id.org}
	}
	if id.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return fmt.Errorf("certificate %s: %w", id.file, err)
	}
	return p.write(id.file, der, key)
}

func (p *pki) write(name string, der []byte, key *ecdsa.PrivateKey) error {
	if err := writePEM(p.path(name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(p.path(name+".key"), "EC PRIVATE KEY", kd)
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// kubeconfig writes the kubeconfig of user (a certificate's file name)
// for the API server at server, and returns its path.
func (p *pki) kubeconfig(user, server string) (string, error) {
	path := p.path(user + ".kubeconfig")
	text := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: sandbox-k8stest
  cluster:
    certificate-authority: %s
    server: %s
users:
- name: %s
  user:
    client-certificate: %s
    client-key: %s
contexts:
- name: sandbox-k8stest
  context:
    cluster: sandbox-k8stest
    user: %s
current-context: sandbox-k8stest
`, p.path("ca.crt"), server, user, p.path(user+".crt"), p.path(user+".key"), user)
	return path, os.WriteFile(path, []byte(text), 0o600)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// UserKubeconfig writes a kubeconfig for a user of no group, whom RBAC
// allows nothing until a Role is bound to them, and returns its path.
func (c *Cluster) UserKubeconfig(user string) (string, error) {
	file := "user-" + user
	if err := c.pki.issue(identity{file: file, cn: user}, time.Now().UnixNano()); err != nil {
		return "", err
	}
	return c.pki.kubeconfig(file, c.Server)
}
