package storage

// The secrets store (API.md "Secrets and certification"): a site's
// certificates, kept only as ciphertext sealed with the data dir's
// secrets key (auth.SealSecret) before the command is made, so replicas
// and backups hold the same sealed bytes. What lists them is stored in
// clear: alias, type, subject, issuer, expiry, fingerprint.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Secret is one sealed secret of a site.
type Secret struct {
	Alias       string    `json:"alias"`
	Type        string    `json:"type"` // CERTIFICATE
	Subject     string    `json:"subject,omitempty"`
	Issuer      string    `json:"issuer,omitempty"`
	NotAfter    time.Time `json:"notAfter"`
	Fingerprint string    `json:"fingerprint,omitempty"` // SHA-256 of the certificate, hex
	Sealed      []byte    `json:"sealed"`
	// AllowedGroups may use a certificate besides the site's governors
	// and Admins (issue 29; API.md "Secrets and certification").
	AllowedGroups []string  `json:"allowedGroups,omitempty"`
	UserID        string    `json:"userId,omitempty"`
	InsertedDate  time.Time `json:"insertedDate"`
}

var aliasRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// MaxSecretGroups bounds a secret's allowedGroups.
const MaxSecretGroups = 50

// CheckSecretGroups validates a secret's allowedGroups: at most
// MaxSecretGroups names of 1 to 128 bytes of text.
func CheckSecretGroups(groups []string) error {
	if len(groups) > MaxSecretGroups {
		return Invalid("allowedGroups", fmt.Sprintf("at most %d allowedGroups", MaxSecretGroups))
	}
	for _, g := range groups {
		if g == "" || len(g) > 128 || CheckText("allowedGroups", g, 128) != nil {
			return Invalid("allowedGroups", "each of 'allowedGroups' is a group name of 1 to 128 characters")
		}
	}
	return nil
}

// ValidSecretAlias reports whether a can name a secret.
func ValidSecretAlias(a string) bool { return aliasRE.MatchString(a) }

// MaxSealedSecret bounds one sealed secret.
const MaxSealedSecret = 64 << 10

func secretKey(site, alias string) []byte { return []byte(pfxSecret + sk(site) + "/" + alias) }

// PutSecret is the payload of OpPutSecret.
type PutSecret struct {
	Secret Secret `json:"secret"`
}

func applyPutSecret(t *tx, c *Command) (any, error) {
	p, err := decode[PutSecret](c)
	if err != nil {
		return nil, err
	}
	s := p.Secret
	if !ValidSecretAlias(s.Alias) {
		return nil, Invalid("alias", "invalid 'alias': 1 to 64 letters, digits, '_', '.' or '-'")
	}
	if len(s.Sealed) == 0 || len(s.Sealed) > MaxSealedSecret {
		return nil, Invalid("data", "the secret is empty or too large")
	}
	if err := CheckSecretGroups(s.AllowedGroups); err != nil {
		return nil, err
	}
	ok, err := t.exists(secretKey(c.Site, s.Alias))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("secret '%s' already exists", s.Alias)}
	}
	// After a rotation every secret is sealed with the rotated key: one
	// sealed with another (a node that had not installed it yet) is sent
	// again.
	var ks SecretsKeyState
	switch err := t.getJSON(secretsKeyStateKey, &ks); {
	case err == nil:
		if sealedKeyID(s.Sealed) != ks.KeyID {
			return nil, &ConflictError{Msg: "the secrets key was rotated while the secret was sealed; send it again"}
		}
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	s.UserID, s.InsertedDate = c.User, c.At
	return nil, t.setJSON(secretKey(c.Site, s.Alias), &s)
}

// SecretRef names a secret (OpDeleteSecret).
type SecretRef struct {
	Alias string `json:"alias"`
}

func applyDeleteSecret(t *tx, c *Command) (any, error) {
	p, err := decode[SecretRef](c)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(secretKey(c.Site, p.Alias))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &NotFoundError{Msg: fmt.Sprintf("secret '%s' not found", p.Alias)}
	}
	return nil, t.del(secretKey(c.Site, p.Alias))
}

// GetSecret reads one secret of a site.
func (d *DB) GetSecret(site, alias string) (*Secret, error) {
	var s Secret
	err := d.view(func(t *tx) error { return t.getJSON(secretKey(site, alias), &s) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("secret '%s' not found", alias)}
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// Secrets lists a site's secrets by alias.
func (d *DB) Secrets(site, after string, limit int) ([]Secret, string, error) {
	return listPage(d, []byte(pfxSecret+sk(site)+"/"), after, limit, func(s *Secret) string { return s.Alias })
}

// AllSecrets lists the secrets of every site (for metrics and doctor),
// at most 10,000.
func (d *DB) AllSecrets() (map[string][]Secret, error) {
	out := map[string][]Secret{}
	n := 0
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxSecret), func(k, v []byte) error {
			rest := string(k[len(pfxSecret):])
			i := strings.IndexByte(rest, '/')
			if i < 0 || n >= 10000 {
				return nil
			}
			var s Secret
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			s.Sealed = nil
			site := siteOfKey(rest[:i])
			out[site] = append(out[site], s)
			n++
			return nil
		})
	})
	return out, err
}

// sealedKeyID reads the secrets key ID that auth.SealSecret writes after
// "QS1" (8 bytes, hex); "" for a secret sealed before keys had IDs.
func sealedKeyID(sealed []byte) string {
	if len(sealed) < 11 || string(sealed[:3]) != "QS1" {
		return ""
	}
	return hex.EncodeToString(sealed[3:11])
}

// SecretsKeyState is the secrets key the store's secrets are sealed with
// since the last rotation (rf/secretskey; never rotated: ErrNotFound).
// Wrapped is the key sealed for a cluster's members (each derives the
// wrapping key from the cluster CA's key); a single server stages the
// key in its data dir instead and Wrapped is empty.
type SecretsKeyState struct {
	KeyID     string    `json:"keyId"`
	Wrapped   []byte    `json:"wrapped,omitempty"`
	RotatedAt time.Time `json:"rotatedAt"`
}

var secretsKeyStateKey = []byte(pfxRaft + "secretskey")

// ResealedSecret is one secret of a rotation: where it is, the SHA-256
// of its sealed bytes when the rotation was made (hex), and its bytes
// sealed with the new key.
type ResealedSecret struct {
	Site   string `json:"site"`
	Alias  string `json:"alias"`
	Was    string `json:"was"`
	Sealed []byte `json:"sealed"`
}

// RotateSecretsKey is the payload of OpRotateSecretsKey.
type RotateSecretsKey struct {
	KeyID   string           `json:"keyId"`
	Wrapped []byte           `json:"wrapped,omitempty"`
	Secrets []ResealedSecret `json:"secrets"`
}

// MaxRotatedSecretBytes bounds the sealed bytes one rotation carries
// (every secret of every site, in one command).
const MaxRotatedSecretBytes = 8 << 20

// ErrTooManySecrets: the secrets are over MaxRotatedSecretBytes sealed.
var ErrTooManySecrets = fmt.Errorf("the secrets are over %d MiB sealed: too many to rotate in one command", MaxRotatedSecretBytes>>20)

var reKeyID = regexp.MustCompile(`^[0-9a-f]{16}$`)

// applyRotateSecretsKey replaces every secret's sealed bytes with the
// command's, sealed with the new key, and records the key's ID: only
// when the command names exactly the secrets stored, each as it was
// when the rotation was made (else 409: a secret was added, changed or
// deleted meanwhile, and the rotation is made again).
func applyRotateSecretsKey(t *tx, c *Command) (any, error) {
	p, err := decode[RotateSecretsKey](c)
	if err != nil {
		return nil, err
	}
	if !reKeyID.MatchString(p.KeyID) {
		return nil, Invalid("keyId", "invalid 'keyId'")
	}
	want := map[string]ResealedSecret{}
	total := 0
	for _, s := range p.Secrets {
		if sealedKeyID(s.Sealed) != p.KeyID || len(s.Sealed) > MaxSealedSecret {
			return nil, Invalid("secrets", fmt.Sprintf("secret '%s' is not sealed with key %s", s.Alias, p.KeyID))
		}
		total += len(s.Sealed)
		want[sk(s.Site)+"/"+s.Alias] = s
	}
	if total > MaxRotatedSecretBytes {
		return nil, Invalid("secrets", ErrTooManySecrets.Error())
	}
	changed := &ConflictError{Msg: "the secrets changed while the rotation was made; rotate again"}
	seen := 0
	var writes [][2][]byte
	err = t.each([]byte(pfxSecret), func(k, v []byte) error {
		var s Secret
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		r, ok := want[string(k[len(pfxSecret):])]
		h := sha256.Sum256(s.Sealed)
		if !ok || r.Was != hex.EncodeToString(h[:]) {
			return changed
		}
		seen++
		s.Sealed = r.Sealed
		b, err := json.Marshal(&s)
		if err != nil {
			return err
		}
		writes = append(writes, [2][]byte{bytes.Clone(k), b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if seen != len(want) {
		return nil, changed
	}
	for _, w := range writes {
		if err := t.set(w[0], w[1]); err != nil {
			return nil, err
		}
	}
	return nil, t.setJSON(secretsKeyStateKey, SecretsKeyState{KeyID: p.KeyID, Wrapped: p.Wrapped, RotatedAt: c.At})
}

// GetSecretsKeyState returns the state of the last rotation.
func (d *DB) GetSecretsKeyState() (*SecretsKeyState, error) {
	var s SecretsKeyState
	if err := d.view(func(t *tx) error { return t.getJSON(secretsKeyStateKey, &s) }); err != nil {
		return nil, err
	}
	return &s, nil
}

// SiteSecret is a secret with its site.
type SiteSecret struct {
	Site   string
	Secret Secret
}

// SealedSecrets returns every site's secrets with their sealed bytes
// (a rotation seals them all again); ErrTooManySecrets past
// MaxRotatedSecretBytes of sealed bytes.
func (d *DB) SealedSecrets() ([]SiteSecret, error) {
	var out []SiteSecret
	total := 0
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxSecret), func(k, v []byte) error {
			rest := string(k[len(pfxSecret):])
			i := strings.IndexByte(rest, '/')
			if i < 0 {
				return nil
			}
			var s Secret
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			if total += len(s.Sealed); total > MaxRotatedSecretBytes {
				return ErrTooManySecrets
			}
			out = append(out, SiteSecret{Site: siteOfKey(rest[:i]), Secret: s})
			return nil
		})
	})
	return out, err
}
