package auth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
)

// The secrets key (<data-dir>/keys/secrets.key) seals the secrets store:
// certificates and provider credentials are stored, and replicated,
// only as AES-256-GCM ciphertext. It lives beside the signing keys, is
// in backups with them, and is handed to a joining node with them.
const secretsKeyFile = "secrets.key"

func loadSecretsKey(dataDir string) ([]byte, error) {
	k, err := loadHexKey(dataDir, secretsKeyFile, "secrets")
	if err == nil && len(k) != 32 {
		err = errors.New("secrets key file is corrupt")
	}
	return k, err
}

// SealSecret encrypts plain with the data dir's secrets key; aad binds it to
// where it is stored (site and alias), so a ciphertext moved elsewhere
// does not open.
func SealSecret(dataDir string, plain, aad []byte) ([]byte, error) {
	g, err := secretsAEAD(dataDir)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return g.Seal(nonce, nonce, plain, aad), nil
}

// OpenSecret decrypts what SealSecret made.
func OpenSecret(dataDir string, sealed, aad []byte) ([]byte, error) {
	g, err := secretsAEAD(dataDir)
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize() {
		return nil, errors.New("secret: too short")
	}
	return g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], aad)
}

func secretsAEAD(dataDir string) (cipher.AEAD, error) {
	k, err := loadSecretsKey(dataDir)
	if err != nil {
		return nil, err
	}
	blk, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(blk)
}
