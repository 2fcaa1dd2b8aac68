package guard

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestDoAndRun(t *testing.T) {
	boom := func() { panic("boom") }
	cases := []struct {
		name     string
		call     func(*slog.Logger) (panicked bool, err error)
		panicked bool
		err      error
	}{
		{"Do, no panic", func(l *slog.Logger) (bool, error) { return Do(l, Storage, func() {}), nil }, false, nil},
		{"Do, panic", func(l *slog.Logger) (bool, error) { return Do(l, Storage, boom), nil }, true, nil},
		{"Run, error", func(l *slog.Logger) (bool, error) {
			err := Run(l, Storage, func() error { return errors.New("plain") })
			return false, err
		}, false, errors.New("plain")},
		{"Run, panic", func(l *slog.Logger) (bool, error) {
			err := Run(l, Storage, func() error { boom(); return nil })
			return errors.Is(err, ErrPanic), err
		}, true, ErrPanic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			before := Count(Storage)
			panicked, err := c.call(slog.New(slog.NewTextHandler(&buf, nil)))
			if panicked != c.panicked || (err == nil) != (c.err == nil) {
				t.Fatalf("panicked %v, err %v; want %v, %v", panicked, err, c.panicked, c.err)
			}
			counted := Count(Storage) - before
			logged := strings.Contains(buf.String(), "panic recovered") && strings.Contains(buf.String(), "guard.TestDoAndRun")
			if c.panicked != (counted == 1) || c.panicked != logged {
				t.Fatalf("counted %v, logged with stack %v: %s", counted, logged, buf.String())
			}
		})
	}
}
