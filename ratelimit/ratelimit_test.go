package ratelimit

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Spec
		err  string
	}{
		{"10/min burst 10, global 10/s burst 40", Spec{Limit{10.0 / 60, 10}, Limit{10, 40}}, ""},
		{"  2/h burst 1 ,  global 7.5/s burst 9 ", Spec{Limit{2.0 / 3600, 1}, Limit{7.5, 9}}, ""},
		{"10/min burst 10", Spec{}, "want \"RATE burst N, global"},
		{"10/min burst 10, 20/s burst 40", Spec{}, "want \", global"},
		{"0/s burst 1, global 1/s burst 1", Spec{}, "positive rate"},
		{"-1/s burst 1, global 1/s burst 1", Spec{}, "positive rate"},
		{"NaN/s burst 1, global 1/s burst 1", Spec{}, "positive rate"},
		{"1/day burst 1, global 1/s burst 1", Spec{}, "rate unit"},
		{"1/s burst 0, global 1/s burst 1", Spec{}, "burst"},
		{"1/s burst 2.5, global 1/s burst 3", Spec{}, "burst"},
		{"1/s burst 1, global 1/s burst 99999999", Spec{}, "burst"},
		{"1/s burst 1, global 9999999/s burst 1", Spec{}, "rate: at most"},
		{"10/s burst 10, global 1/s burst 40", Spec{}, "below the per-client one"},
		{"1/s, global 1/s burst 1", Spec{}, "want \"RATE burst N\""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Parse = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestDefaultsParse: every class's default is a valid spec.
func TestDefaultsParse(t *testing.T) {
	if _, err := NewSet(Defaults()); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(map[string]string{"nope": "1/s burst 1, global 1/s burst 1"}); err == nil {
		t.Fatal("an unknown class was taken")
	}
	if _, err := NewSet(map[string]string{SignIn: "fast"}); err == nil || !strings.Contains(err.Error(), "ratelimit.signin") {
		t.Fatalf("a bad spec: %v", err)
	}
}

func TestLimiter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type call struct {
		client string
		at     time.Duration // after t0
		ok     bool
		wait   time.Duration // when refused
	}
	for _, tt := range []struct {
		name  string
		spec  string
		calls []call
	}{
		{"burst then wait", "1/s burst 2, global 100/s burst 100", []call{
			{"a", 0, true, 0}, {"a", 0, true, 0}, {"a", 0, false, time.Second},
			{"a", 500 * time.Millisecond, false, 500 * time.Millisecond}, {"a", time.Second, true, 0}, {"a", time.Second, false, time.Second}}},
		{"clients are apart", "1/min burst 1, global 100/s burst 100", []call{
			{"a", 0, true, 0}, {"a", 0, false, time.Minute}, {"b", 0, true, 0}, {"b", 0, false, time.Minute}}},
		{"global", "10/s burst 10, global 10/s burst 10", []call{
			{"a", 0, true, 0}, {"b", 0, true, 0}, {"c", 0, true, 0}, {"d", 0, true, 0}, {"e", 0, true, 0},
			{"f", 0, true, 0}, {"g", 0, true, 0}, {"h", 0, true, 0}, {"i", 0, true, 0}, {"j", 0, true, 0},
			{"k", 0, false, 100 * time.Millisecond}}},
		{"a refused client spends nothing of the global bucket", "1/h burst 1, global 1/h burst 2", []call{
			{"a", 0, true, 0}, {"a", 0, false, time.Hour}, {"a", 0, false, time.Hour}, {"b", 0, true, 0}, {"c", 0, false, time.Hour}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sp, err := Parse(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			l := NewLimiter(sp)
			for i, c := range tt.calls {
				ok, wait := l.Allow(c.client, t0.Add(c.at))
				if ok != c.ok || (!ok && (wait < c.wait-time.Millisecond || wait > c.wait+time.Millisecond)) {
					t.Fatalf("call %d (%s at %v) = %v wait %v; want %v wait %v", i, c.client, c.at, ok, wait, c.ok, c.wait)
				}
			}
		})
	}
}

// TestLimiter_Bounded: a flood of addresses keeps at most MaxClients
// buckets; idle ones make room.
func TestLimiter_Bounded(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := NewLimiter(Spec{Client: Limit{1, 1}, Global: Limit{1e6, 1e6}})
	for i := range MaxClients {
		if ok, _ := l.Allow(fmt.Sprint(i), t0); !ok {
			t.Fatalf("client %d refused", i)
		}
	}
	if ok, _ := l.Allow("one more", t0); ok {
		t.Fatal("a client beyond MaxClients with every bucket in use was let in")
	}
	if ok, _ := l.Allow("one more", t0.Add(2*time.Second)); !ok {
		t.Fatal("idle buckets were not dropped for a new client")
	}
	if n := len(l.clients); n > MaxClients {
		t.Fatalf("%d buckets", n)
	}
}
