package storage

import (
	"testing"
	"time"
)

// TestRefreshToken_Of: a refresh token belongs to the user of its name,
// generation and creation; a token stored before the creation was
// recorded counts when it was issued after the user was made.
func TestRefreshToken_Of(t *testing.T) {
	t.Parallel() // own store, no package or process state
	made := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ttl := 30 * 24 * time.Hour
	u := &User{Username: "eve", Generation: 3, InsertedDate: made}
	for _, tt := range []struct {
		name string
		rt   RefreshToken
		want bool
	}{
		{"issued to this user", RefreshToken{Username: "eve", Generation: 3, Expires: made.Add(ttl), UserInserted: made}, true},
		{"another generation", RefreshToken{Username: "eve", Generation: 2, Expires: made.Add(ttl), UserInserted: made}, false},
		{"another name", RefreshToken{Username: "eva", Generation: 3, Expires: made.Add(ttl), UserInserted: made}, false},
		{"an earlier user of the name", RefreshToken{Username: "eve", Generation: 3, Expires: made.Add(ttl), UserInserted: made.Add(-time.Hour)}, false},
		{"legacy, issued after the user was made", RefreshToken{Username: "eve", Generation: 3, Expires: made.Add(ttl + time.Minute)}, true},
		{"legacy, issued before the user was made", RefreshToken{Username: "eve", Generation: 3, Expires: made.Add(ttl - time.Minute)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rt.Of(u, ttl); got != tt.want {
				t.Fatalf("Of = %v, want %v", got, tt.want)
			}
		})
	}
}
