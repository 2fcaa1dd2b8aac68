package api

import (
	"testing"
	"time"
)

// TestThumbnails_URLExpiry: a thumbnailUrl minted within one window
// expires at the same time (the same link, which a browser keeps), at
// least an hour and less than an hour and a window after it was minted.
func TestThumbnails_URLExpiry(t *testing.T) {
	day := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		at   time.Duration // after midnight
		want time.Duration // expiry, after midnight
	}{
		{"at a window's start", 12 * time.Hour, 13*time.Hour + 30*time.Minute},
		{"within it", 12*time.Hour + 17*time.Minute, 13*time.Hour + 30*time.Minute},
		{"a second before its end", 12*time.Hour + 30*time.Minute - time.Second, 13*time.Hour + 30*time.Minute},
		{"the next window", 12*time.Hour + 30*time.Minute, 14 * time.Hour},
		{"across midnight", 23*time.Hour + 45*time.Minute, 25 * time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := day.Add(tt.at)
			got := thumbnailURLExpiry(now)
			if !got.Equal(day.Add(tt.want)) {
				t.Fatalf("minted at %s: expires %s, want %s", now, got, day.Add(tt.want))
			}
			if d := got.Sub(now); d < thumbnailURLDuration || d > thumbnailURLDuration+thumbnailURLWindow {
				t.Fatalf("valid for %s", d)
			}
		})
	}
}
