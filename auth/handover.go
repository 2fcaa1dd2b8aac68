package auth

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Keys are the secrets of <data-dir>/keys that every member of a cluster
// shares, so that a token signed on one node (quire token on any
// member's data dir) and a signed upload or download URL made by one
// node are accepted by every node. A member hands them to a node joining
// the cluster (POST /cluster/join); the new node installs them before it
// serves. API keys and site secrets live in the replicated store and
// need no hand-over.
type Keys struct {
	// SigningKey is the ES256 token signing key, PEM (PKCS#8).
	SigningKey string `json:"jwtSigningKey"`
	// URLKey is the HMAC key of signed URLs, hex.
	URLKey string `json:"urlSigningKey"`
	// SecretsKey seals the secrets store, hex (auth/secrets.go).
	SecretsKey string `json:"secretsKey,omitempty"`
}

// ExportKeys returns the keys of dataDir (creating them on a new data
// dir, as the server would).
func ExportKeys(dataDir string) (Keys, error) {
	if _, _, err := loadSigningKey(dataDir); err != nil {
		return Keys{}, err
	}
	if _, err := loadURLKey(dataDir); err != nil {
		return Keys{}, err
	}
	if _, err := loadSecretsKey(dataDir); err != nil {
		return Keys{}, err
	}
	dir := filepath.Join(dataDir, keysDir)
	sk, err := os.ReadFile(filepath.Join(dir, signingKeyFile))
	if err != nil {
		return Keys{}, err
	}
	uk, err := os.ReadFile(filepath.Join(dir, urlKeyFile))
	if err != nil {
		return Keys{}, err
	}
	sec, err := os.ReadFile(filepath.Join(dir, secretsKeyFile))
	if err != nil {
		return Keys{}, err
	}
	return Keys{SigningKey: string(sk), URLKey: strings.TrimSpace(string(uk)), SecretsKey: strings.TrimSpace(string(sec))}, nil
}

// check reports whether k holds an ECDSA signing key and a URL key of at
// least 32 bytes.
func (k Keys) check() error {
	blk, _ := pem.Decode([]byte(k.SigningKey))
	if blk == nil {
		return errors.New("auth: the signing key handed over holds no PEM block")
	}
	pk, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return fmt.Errorf("auth: the signing key handed over: %w", err)
	}
	if _, ok := pk.(*ecdsa.PrivateKey); !ok {
		return errors.New("auth: the signing key handed over is not an ECDSA key")
	}
	if u, err := hex.DecodeString(strings.TrimSpace(k.URLKey)); err != nil || len(u) < 32 {
		return errors.New("auth: the URL signing key handed over is not 32 or more hex-encoded bytes")
	}
	if k.SecretsKey != "" {
		if u, err := hex.DecodeString(k.SecretsKey); err != nil || len(u) != 32 {
			return errors.New("auth: the secrets key handed over is not 32 hex-encoded bytes")
		}
	}
	return nil
}

// InstallKeys replaces the keys of dataDir with k (each file written to
// a temporary file, synced and renamed into place, 0600). A running
// Authenticator on dataDir keeps its old keys until ReloadKeys.
func InstallKeys(dataDir string, k Keys) error {
	if err := k.check(); err != nil {
		return err
	}
	dir := filepath.Join(dataDir, keysDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := replaceFile(dir, signingKeyFile, []byte(k.SigningKey)); err != nil {
		return err
	}
	if k.SecretsKey != "" {
		if err := replaceFile(dir, secretsKeyFile, []byte(k.SecretsKey+"\n")); err != nil {
			return err
		}
	}
	return replaceFile(dir, urlKeyFile, []byte(strings.TrimSpace(k.URLKey)+"\n"))
}

func replaceFile(dir, name string, data []byte) error {
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// ReloadKeys reads the signing and URL keys of the data dir again (after
// InstallKeys) and forgets the tokens verified so far. It must be called
// before the Authenticator is in use: the keys are read by requests
// without a lock.
func (a *Authenticator) ReloadKeys() error {
	k, kid, err := loadSigningKey(a.cfg.DataDir)
	if err != nil {
		return err
	}
	uk, err := loadURLKey(a.cfg.DataDir)
	if err != nil {
		return err
	}
	a.ks.Store(&keySet{key: k, kid: kid, urlKey: uk})
	a.verified.mu.Lock()
	a.verified.m = nil
	a.verified.mu.Unlock()
	return nil
}
