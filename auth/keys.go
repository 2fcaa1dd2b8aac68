package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Key files in <data-dir>/keys. They live outside Badger so that
// `quire token` can read them while the server holds Badger's lock.
const (
	keysDir        = "keys"
	signingKeyFile = "jwt-signing.pem"
	urlKeyFile     = "url-signing.key"
)

// loadOrCreate returns the contents of dir/name, creating it with gen when
// it does not exist. Two processes racing on a new data dir end up with the
// same file: each writes a temporary file and links it into place, and the
// loser reads the winner's.
func loadOrCreate(dir, name string, gen func() ([]byte, error)) ([]byte, error) {
	path := filepath.Join(dir, name)
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	data, err := gen()
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("write key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("sync key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("install key file: %w", err)
	}
	syncDir(dir)
	return os.ReadFile(path)
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// loadSigningKey loads (or creates) the ES256 key Quire signs tokens with.
func loadSigningKey(dataDir string) (*ecdsa.PrivateKey, string, error) {
	b, err := loadOrCreate(filepath.Join(dataDir, keysDir), signingKeyFile, func() ([]byte, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			return nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
	})
	if err != nil {
		return nil, "", err
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, "", errors.New("signing key file holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, "", fmt.Errorf("parse signing key: %w", err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, "", errors.New("signing key is not an ECDSA key")
	}
	pub, err := x509.MarshalPKIXPublicKey(&ek.PublicKey)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(pub)
	return ek, hex.EncodeToString(sum[:8]), nil
}

// loadURLKey loads (or creates) the HMAC key of signed URLs.
func loadURLKey(dataDir string) ([]byte, error) {
	return loadHexKey(dataDir, urlKeyFile, "url signing")
}

// loadHexKey reads (or creates) a file of 32 random bytes in hex.
func loadHexKey(dataDir, file, what string) ([]byte, error) {
	b, err := loadOrCreate(filepath.Join(dataDir, keysDir), file, func() ([]byte, error) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		return []byte(hex.EncodeToString(k) + "\n"), nil
	})
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) < 32 {
		return nil, errors.New(what + " key file is corrupt")
	}
	return k, nil
}
