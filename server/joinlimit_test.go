package server

import (
	"testing"
	"time"
)

func TestJoinLimiter_PerClientAndInAll(t *testing.T) {
	var l joinLimiter
	now := time.Unix(1_700_000_000, 0)
	for i := range joinPerClient {
		if !l.allow("10.0.0.1", now) {
			t.Fatalf("attempt %d from one client refused", i+1)
		}
	}
	if l.allow("10.0.0.1", now) {
		t.Fatal("an attempt over the per-client limit allowed")
	}
	if !l.allow("10.0.0.2", now) {
		t.Fatal("another client refused")
	}
	for i := 0; l.all < joinPerWindowAll; i++ {
		if !l.allow("10.1.0."+string(rune('a'+i%26))+string(rune('a'+i/26)), now) {
			t.Fatalf("attempt %d in all refused below the limit", l.all+1)
		}
	}
	if l.allow("10.9.9.9", now) {
		t.Fatal("an attempt over the overall limit allowed")
	}
	if !l.allow("10.0.0.1", now.Add(joinWindow)) {
		t.Fatal("a new window still refuses")
	}
}
