package storage

import (
	"encoding/binary"
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
