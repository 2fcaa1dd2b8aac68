package auth

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// The secrets key (<data-dir>/keys/secrets.key) seals the secrets store:
// certificates and provider credentials are stored, and replicated,
// only as AES-256-GCM ciphertext. It lives beside the signing keys, is
// in backups with them, and is handed to a joining node with them.
// POST /system/secrets/rotate replaces it (storage.OpRotateSecretsKey):
// every secret is sealed again under the new key in one command.
const (
	secretsKeyFile  = "secrets.key"
	stagedKeyFile   = "secrets.key.next"
	sealMagic       = "QS1"
	secretsKeyIDLen = 8
)

// ErrSecretsKeyPending is a secret sealed with a key this node has not
// installed yet (a rotation is being applied) or no longer has.
var ErrSecretsKeyPending = errors.New("the secret is sealed with another secrets key than this node's (a rotation is under way)")

func loadSecretsKey(dataDir string) ([]byte, error) {
	k, err := loadHexKey(dataDir, secretsKeyFile, "secrets")
	if err == nil && len(k) != 32 {
		err = errors.New("secrets key file is corrupt")
	}
	return k, err
}

// SecretsKeyID names a secrets key without revealing it: 16 hex digits
// of a hash of it. Sealed secrets carry it.
func SecretsKeyID(k []byte) string {
	h := sha256.Sum256(append([]byte("quire secrets key id\x00"), k...))
	return hex.EncodeToString(h[:secretsKeyIDLen])
}

// CurrentSecretsKeyID is the ID of the data dir's secrets key.
func CurrentSecretsKeyID(dataDir string) (string, error) {
	k, err := loadSecretsKey(dataDir)
	if err != nil {
		return "", err
	}
	return SecretsKeyID(k), nil
}

// SealedKeyID is the ID of the key a secret was sealed with; "" for a
// secret sealed before keys had IDs (by the data dir's first key).
func SealedKeyID(sealed []byte) string {
	if !bytes.HasPrefix(sealed, []byte(sealMagic)) || len(sealed) < len(sealMagic)+secretsKeyIDLen {
		return ""
	}
	return hex.EncodeToString(sealed[len(sealMagic) : len(sealMagic)+secretsKeyIDLen])
}

// SealSecret encrypts plain with the data dir's secrets key; aad binds it to
// where it is stored (site and alias), so a ciphertext moved elsewhere
// does not open.
func SealSecret(dataDir string, plain, aad []byte) ([]byte, error) {
	k, err := loadSecretsKey(dataDir)
	if err != nil {
		return nil, err
	}
	return sealWith(k, plain, aad)
}

// sealWith is "QS1", the key's ID (8 bytes), the nonce and the
// AES-256-GCM ciphertext of plain.
func sealWith(k, plain, aad []byte) ([]byte, error) {
	g, err := gcm(k)
	if err != nil {
		return nil, err
	}
	id, _ := hex.DecodeString(SecretsKeyID(k))
	out := append([]byte(sealMagic), id...)
	nonce := make([]byte, g.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out = append(out, nonce...)
	return g.Seal(out, nonce, plain, aad), nil
}

// OpenSecret decrypts what SealSecret made.
func OpenSecret(dataDir string, sealed, aad []byte) ([]byte, error) {
	k, err := loadSecretsKey(dataDir)
	if err != nil {
		return nil, err
	}
	return openWith(k, sealed, aad)
}

func openWith(k, sealed, aad []byte) ([]byte, error) {
	if id := SealedKeyID(sealed); id != "" {
		if id != SecretsKeyID(k) {
			return nil, ErrSecretsKeyPending
		}
		sealed = sealed[len(sealMagic)+secretsKeyIDLen:]
	}
	g, err := gcm(k)
	if err != nil {
		return nil, err
	}
	if len(sealed) < g.NonceSize() {
		return nil, errors.New("secret: too short")
	}
	return g.Open(nil, sealed[:g.NonceSize()], sealed[g.NonceSize():], aad)
}

func gcm(k []byte) (cipher.AEAD, error) {
	blk, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(blk)
}

// NewSecretsKey makes a fresh secrets key.
func NewSecretsKey() ([]byte, error) {
	k := make([]byte, 32)
	_, err := rand.Read(k)
	return k, err
}

// ResealSecret opens sealed with the data dir's key and seals it again
// with next.
func ResealSecret(dataDir string, next, sealed, aad []byte) ([]byte, error) {
	plain, err := OpenSecret(dataDir, sealed, aad)
	if err != nil {
		return nil, err
	}
	return sealWith(next, plain, aad)
}

// WrapKey seals a secrets key with a wrapping key (a cluster's members
// derive the same one from their CA key), for the rotation command.
func WrapKey(wrapKey, k []byte) ([]byte, error) {
	return sealWith(wrapKey, k, []byte("quire secrets key"))
}

// UnwrapKey opens what WrapKey made.
func UnwrapKey(wrapKey, wrapped []byte) ([]byte, error) {
	return openWith(wrapKey, wrapped, []byte("quire secrets key"))
}

// StageSecretsKey keeps next beside the current key until the rotation
// command is applied (a single server: the command carries no key).
func StageSecretsKey(dataDir string, next []byte) error {
	return replaceFile(filepath.Join(dataDir, keysDir), stagedKeyFile, []byte(hex.EncodeToString(next)+"\n"))
}

// StagedSecretsKey reads the staged key (os.ErrNotExist: none).
func StagedSecretsKey(dataDir string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, keysDir, stagedKeyFile))
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(k) != 32 {
		return nil, errors.New("the staged secrets key is corrupt")
	}
	return k, nil
}

// InstallSecretsKey makes k the data dir's secrets key (written and
// synced before the old one is replaced) and drops a staged key.
func InstallSecretsKey(dataDir string, k []byte) error {
	if len(k) != 32 {
		return errors.New("auth: a secrets key is 32 bytes")
	}
	if err := replaceFile(filepath.Join(dataDir, keysDir), secretsKeyFile, []byte(hex.EncodeToString(k)+"\n")); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dataDir, keysDir, stagedKeyFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
