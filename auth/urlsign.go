package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
)

// SignURL returns the HMAC-SHA256 signature of fields (base64url). Each
// field is length-prefixed, so no two field lists sign the same bytes.
func SignURL(key []byte, fields ...string) string {
	m := hmac.New(sha256.New, key)
	for _, f := range fields {
		m.Write([]byte(strconv.Itoa(len(f))))
		m.Write([]byte{':'})
		m.Write([]byte(f))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// VerifyURL reports whether sig is the signature of fields, in constant
// time.
func VerifyURL(key []byte, sig string, fields ...string) bool {
	want := SignURL(key, fields...)
	return hmac.Equal([]byte(sig), []byte(want))
}

// APIKeyStore looks up per-site API keys by the SHA-256 of the key.
type APIKeyStore interface {
	LookupAPIKey(hash string) (APIKey, error)
}

// APIKey is what the store knows about an API key.
type APIKey struct {
	Name, Site, UserID string
	Permissions        []Permission
	Groups             []string
}

// HashAPIKey returns the hex SHA-256 of an API key, the form it is stored
// and looked up in.
func HashAPIKey(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

// NewAPIKey returns a new random API key: 32 bytes, base64url, no dots
// (so it is never mistaken for a JWT). A key never starts with '-' or '_':
// one starting with '-' is read as an option by the command-line tools
// people paste keys into (swaks, smbclient, curl -u), one time in 32.
func NewAPIKey() (string, error) {
	b := make([]byte, 32)
	for {
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		// base64's first character is the top six bits of b[0]; 62 and
		// 63 are '-' and '_'.
		if b[0]>>2 < 62 {
			return base64.RawURLEncoding.EncodeToString(b), nil
		}
	}
}
