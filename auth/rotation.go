package auth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strings"
	"time"
)

// Key rotation (cluster/DESIGN.md, "Key rotation"): new signing keys are
// a command every node applies; each node then swaps its keys with
// UseKeys. The keys before the rotation keep verifying tokens and signed
// URLs until the grace ends, so what was issued before keeps working
// until it expires; only the new keys sign.

// keySet is the Authenticator's own keys, replaced whole.
type keySet struct {
	key    *ecdsa.PrivateKey
	kid    string
	urlKey []byte
	// prev, prevKid and prevURL are the keys before the last rotation:
	// they verify (never sign) until prevUntil.
	prev      *ecdsa.PublicKey
	prevKid   string
	prevURL   []byte
	prevUntil time.Time
}

// ownKey is the public key that verifies a token of this issuer with key
// id kid: the current key, or the previous one within its grace.
func (a *Authenticator) ownKey(kid string) (any, error) {
	ks := a.ks.Load()
	switch {
	case kid == "" || kid == ks.kid:
		return &ks.key.PublicKey, nil
	case ks.prev != nil && kid == ks.prevKid && a.cfg.Now().Before(ks.prevUntil):
		return ks.prev, nil
	}
	return nil, errors.New("unknown kid")
}

// VerifyURL reports whether sig signs fields with the current URL key,
// or with the previous one within its grace.
func (a *Authenticator) VerifyURL(sig string, fields ...string) bool {
	ks := a.ks.Load()
	if VerifyURL(ks.urlKey, sig, fields...) {
		return true
	}
	return ks.prevURL != nil && a.cfg.Now().Before(ks.prevUntil) && VerifyURL(ks.prevURL, sig, fields...)
}

// parse returns the signing key, its key id and the URL key of k.
func (k Keys) parse() (*ecdsa.PrivateKey, string, []byte, error) {
	if err := k.check(); err != nil {
		return nil, "", nil, err
	}
	blk, _ := pem.Decode([]byte(k.SigningKey))
	pk, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, "", nil, err
	}
	ek, _ := pk.(*ecdsa.PrivateKey) // check made sure
	pub, err := x509.MarshalPKIXPublicKey(&ek.PublicKey)
	if err != nil {
		return nil, "", nil, err
	}
	sum := sha256.Sum256(pub)
	uk, err := hex.DecodeString(strings.TrimSpace(k.URLKey))
	if err != nil {
		return nil, "", nil, err
	}
	return ek, hex.EncodeToString(sum[:8]), uk, nil
}

// KeyID is the key id ("kid") tokens signed with k carry.
func KeyID(k Keys) (string, error) {
	_, kid, _, err := k.parse()
	return kid, err
}

// NewKeys makes a new token signing key (ES256) and URL key (32 bytes).
func NewKeys() (Keys, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Keys{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return Keys{}, err
	}
	u := make([]byte, 32)
	if _, err := rand.Read(u); err != nil {
		return Keys{}, err
	}
	return Keys{SigningKey: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), URLKey: hex.EncodeToString(u)}, nil
}

// UseKeys makes cur the keys that sign and verify, and prev (when not
// nil) keys that only verify until prevUntil. It is safe while requests
// are served. The tokens verified so far are forgotten. The key files
// are not touched (InstallKeys writes them).
func (a *Authenticator) UseKeys(cur Keys, prev *Keys, prevUntil time.Time) error {
	k, kid, uk, err := cur.parse()
	if err != nil {
		return err
	}
	ks := &keySet{key: k, kid: kid, urlKey: uk}
	if prev != nil {
		pk, pkid, puk, err := prev.parse()
		if err != nil {
			return err
		}
		if pkid != kid || !hmac.Equal(puk, uk) {
			ks.prev, ks.prevKid, ks.prevURL, ks.prevUntil = &pk.PublicKey, pkid, puk, prevUntil
		}
	}
	a.ks.Store(ks)
	a.verified.mu.Lock()
	a.verified.m = nil
	a.verified.mu.Unlock()
	return nil
}
