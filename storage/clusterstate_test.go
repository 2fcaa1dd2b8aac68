package storage

import (
	"errors"
	"testing"
	"time"
)

// A join token is spent once; records of tokens expired before a later
// spend's time are dropped by that spend, on every node alike.
func TestSpendJoinToken_OnceAndExpiredRecordsDropped(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	spend := func(id string, at, exp time.Time) error {
		_, err := d.Apply(t.Context(), MustCommand(OpSpendJoinToken, "", "cluster", at, SpendJoinToken{ID: id, Expires: exp}))
		return err
	}
	if err := spend("aa", t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var ce *ConflictError
	if err := spend("aa", t0.Add(time.Minute), t0.Add(time.Hour)); !errors.As(err, &ce) {
		t.Fatalf("second spend: %v, want a ConflictError", err)
	}
	var ve *ValidationError
	if err := spend("", t0, t0.Add(time.Hour)); !errors.As(err, &ve) {
		t.Fatalf("spend without id: %v, want a validation error", err)
	}
	// Two hours later "aa" has expired: the next spend drops its record.
	if err := spend("bb", t0.Add(2*time.Hour), t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	var keys []string
	d.view(func(t *tx) error {
		for _, k := range t.keys([]byte(pfxJoinSpent)) {
			keys = append(keys, string(k))
		}
		return nil
	})
	if len(keys) != 1 || keys[0] != pfxJoinSpent+"bb" {
		t.Fatalf("spent records %q, want only bb's", keys)
	}
}
