package auth

import (
	"strings"
	"testing"
)

// TestNewAPIKey_NeverLooksLikeAnOption draws enough keys that a leading
// '-' or '_' (one in 32 before the fix) would show up many times.
func TestNewAPIKey_NeverLooksLikeAnOption(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 2000; i++ {
		k, err := NewAPIKey()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(k, "-") || strings.HasPrefix(k, "_") {
			t.Fatalf("key %q starts with %q", k, k[:1])
		}
		if len(k) != 43 || strings.Contains(k, ".") {
			t.Fatalf("key %q: want 43 base64url characters, no dot", k)
		}
		if seen[k] {
			t.Fatalf("key %q drawn twice", k)
		}
		seen[k] = true
	}
}
