package auth

import (
	"testing"
	"time"
)

// After UseKeys the new key signs; a token and a URL signature of the
// previous key verify until the grace ends, also when the token was
// verified (and could have been cached) before; then they are refused.
func TestUseKeys_PreviousKeyVerifiesUntilTheGraceEnds(t *testing.T) {
	now := time.Now()
	a := mustOpen(t, Config{Now: func() time.Time { return now }, Leeway: time.Second}, nil)
	oldTok, err := a.Sign("ann", []string{"default"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	oldSig := SignURL(a.URLKey(), "GET", "default", "doc")
	oldKeys, err := ExportKeys(a.cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	next, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.UseKeys(next, &oldKeys, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	newTok, err := a.Sign("ann", []string{"default"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := KeyID(next)
	if err != nil || a.ks.Load().kid != kid {
		t.Fatalf("signing kid %s, want the new key's %s (%v)", a.ks.Load().kid, kid, err)
	}
	for i, c := range []struct {
		at    time.Duration
		oldOK bool
	}{{0, true}, {30 * time.Second, true}, {61 * time.Second, false}} {
		now = time.Now().Add(c.at)
		if p, err := a.Authenticate(newTok); err != nil || p == nil {
			t.Fatalf("step %d: the new key's token: %v", i, err)
		}
		p, err := a.Authenticate(oldTok)
		if c.oldOK && err != nil {
			t.Fatalf("step %d (+%s): the previous key's token: %v", i, c.at, err)
		}
		if !c.oldOK {
			wantUnauthorized(t, p, err)
		}
		if got := a.VerifyURL(oldSig, "GET", "default", "doc"); got != c.oldOK {
			t.Fatalf("step %d (+%s): previous URL signature verifies = %v, want %v", i, c.at, got, c.oldOK)
		}
	}
	if !a.VerifyURL(SignURL(a.URLKey(), "GET", "default", "doc"), "GET", "default", "doc") {
		t.Fatal("the new URL key's signature is refused")
	}
}
