package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Cluster-wide state that belongs to the cluster's identity rather than to
// a site: the join tokens already spent (cluster/DESIGN.md, "Join
// tokens"). It lives in the store, so every member holds it and a new
// leader knows what the old one recorded.

// SpendJoinToken is the payload of OpSpendJoinToken: a join token's id
// (its nonce) and when it expires. Spending it a second time is a
// ConflictError on every node.
type SpendJoinToken struct {
	ID      string    `json:"id"`
	Expires time.Time `json:"expires"`
}

func joinSpentKey(id string) []byte { return []byte(pfxJoinSpent + id) }

// applySpendJoinToken records a join token as spent. Records of tokens
// that expired before the command's time are dropped in the same
// transaction (the command's time, not the clock: every node drops the
// same ones); an expired token is refused before it gets here.
func applySpendJoinToken(t *tx, c *Command) (any, error) {
	p, err := decode[SpendJoinToken](c)
	if err != nil {
		return nil, err
	}
	if err := checkName("id", p.ID); err != nil || p.ID == "" {
		return nil, Invalid("id", "invalid 'id'")
	}
	if p.Expires.IsZero() {
		return nil, Invalid("expires", "invalid 'expires'")
	}
	var old [][]byte
	if err := t.each([]byte(pfxJoinSpent), func(key, val []byte) error {
		if len(val) == 8 && int64(binary.BigEndian.Uint64(val)) < c.At.Unix() {
			old = append(old, append([]byte(nil), key...))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, k := range old {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	spent, err := t.exists(joinSpentKey(p.ID))
	if err != nil {
		return nil, err
	}
	if spent {
		return nil, &ConflictError{Msg: fmt.Sprintf("join token %s was already redeemed", p.ID)}
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(p.Expires.Unix()))
	return nil, t.set(joinSpentKey(p.ID), v[:])
}

// SigningKeys are the token signing key (ES256, PKCS#8 PEM) and the HMAC
// key of signed URLs (hex) that every node of a cluster shares (auth.Keys).
type SigningKeys struct {
	SigningKey string `json:"jwtSigningKey"`
	URLKey     string `json:"urlSigningKey"`
}

// KeyRing is the signing keys in force: Current signs and verifies;
// Previous, the keys before the last rotation, only verifies, until
// PreviousUntil. It is replication state (rf/, left out of backups like
// the key files).
type KeyRing struct {
	Current       SigningKeys  `json:"current"`
	Previous      *SigningKeys `json:"previous,omitempty"`
	PreviousUntil time.Time    `json:"previousUntil"`
	RotatedAt     time.Time    `json:"rotatedAt"`
}

// RotateKeys is the payload of OpRotateKeys: the new keys, the keys the
// proposing node signs with now (the previous ones of a first rotation:
// the store holds no ring yet), and how long the previous keys still
// verify.
type RotateKeys struct {
	Keys         SigningKeys `json:"keys"`
	Previous     SigningKeys `json:"previous"`
	GraceSeconds int64       `json:"graceSeconds"`
}

// MaxKeyGrace bounds how long previous keys keep verifying.
const MaxKeyGrace = 30 * 24 * time.Hour

var keyRingKey = []byte(pfxRaft + "keys")

// applyRotateKeys makes p.Keys the current keys; the current ones become
// the previous ones (from the ring, or from the command at the first
// rotation), valid until the command's time plus the grace. Every node
// computes the same ring; each node's OnCommit hook installs it.
func applyRotateKeys(t *tx, c *Command) (any, error) {
	p, err := decode[RotateKeys](c)
	if err != nil {
		return nil, err
	}
	if p.Keys.SigningKey == "" || p.Keys.URLKey == "" {
		return nil, Invalid("keys", "invalid 'keys'")
	}
	if p.GraceSeconds < 0 || time.Duration(p.GraceSeconds)*time.Second > MaxKeyGrace {
		return nil, Invalid("graceSeconds", fmt.Sprintf("invalid 'graceSeconds': between 0 and %d", int64(MaxKeyGrace/time.Second)))
	}
	ring := KeyRing{Current: p.Keys, RotatedAt: c.At, PreviousUntil: c.At.Add(time.Duration(p.GraceSeconds) * time.Second)}
	var old KeyRing
	switch err := t.getJSON(keyRingKey, &old); {
	case err == nil:
		prev := old.Current
		ring.Previous = &prev
	case errors.Is(err, ErrNotFound):
		if p.Previous.SigningKey != "" && p.Previous.URLKey != "" {
			prev := p.Previous
			ring.Previous = &prev
		}
	default:
		return nil, err
	}
	return nil, t.setJSON(keyRingKey, ring)
}

// KeyRing returns the signing keys rotated through the store (ErrNotFound:
// never rotated; the key files are then the keys).
func (d *DB) KeyRing() (*KeyRing, error) {
	var r KeyRing
	if err := d.view(func(t *tx) error { return t.getJSON(keyRingKey, &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}
