package storage

// The secrets store (API.md "Secrets and certification"): a site's
// certificates, kept only as ciphertext sealed with the data dir's
// secrets key (auth.SealSecret) before the command is made, so replicas
// and backups hold the same sealed bytes. What lists them is stored in
// clear: alias, type, subject, issuer, expiry, fingerprint.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Secret is one sealed secret of a site.
type Secret struct {
	Alias        string    `json:"alias"`
	Type         string    `json:"type"` // CERTIFICATE
	Subject      string    `json:"subject,omitempty"`
	Issuer       string    `json:"issuer,omitempty"`
	NotAfter     time.Time `json:"notAfter"`
	Fingerprint  string    `json:"fingerprint,omitempty"` // SHA-256 of the certificate, hex
	Sealed       []byte    `json:"sealed"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

var aliasRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

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
	ok, err := t.exists(secretKey(c.Site, s.Alias))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("secret '%s' already exists", s.Alias)}
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
