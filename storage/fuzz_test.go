package storage

import (
	"math"
	"strconv"
	"testing"
	"time"
)

// The fuzz targets of package storage (`make fuzz`; seeds run in every
// `go test`).

// FuzzNumberEncoding: the index form of a NUMBER attribute value decodes
// to the same number, and encodings sort as the numbers do (range
// searches compare encodings).
func FuzzNumberEncoding(f *testing.F) {
	for _, p := range [][2]float64{{0, 1}, {-1, 1}, {math.Copysign(0, -1), -1}, {1e308, -1e308}, {0.1, 0.2}, {-2.5, -2.25}} {
		f.Add(p[0], p[1])
	}
	f.Fuzz(func(t *testing.T, a, b float64) {
		if math.IsNaN(a) || math.IsNaN(b) {
			return // JSON cannot carry NaN
		}
		for _, x := range []float64{a, b} {
			e := EncodeNumber(x)
			n, err := strconv.ParseUint(e, 16, 64)
			if err != nil || len(e) != 16 {
				t.Fatalf("EncodeNumber(%v) = %q", x, e)
			}
			if back := decodeNumber(n); back != x {
				t.Fatalf("EncodeNumber(%v) decodes to %v", x, back)
			}
			if !math.IsInf(x, 0) {
				if back, err := strconv.ParseFloat(FormatNumber(x), 64); err != nil || back != x {
					t.Fatalf("FormatNumber(%v) = %q parses to %v", x, FormatNumber(x), back)
				}
			}
		}
		ea, eb := EncodeNumber(a), EncodeNumber(b)
		if (a < b) != (ea < eb) || (a == b) != (ea == eb) {
			t.Fatalf("%v, %v encode to %s, %s: order differs", a, b, ea, eb)
		}
	})
}

// FuzzNormalizeDate: a DATE value that is accepted comes back in
// DateLayout, and normalizing it again changes nothing.
func FuzzNormalizeDate(f *testing.F) {
	for _, s := range []string{"2026-01-02", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05.123+02:00", "2026-13-45", "", "0000-01-01T00:00", "9999-12-31T23:59:59-23:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := NormalizeDate(s)
		if !ok {
			return
		}
		if _, err := time.Parse(DateLayout, n); err != nil {
			t.Fatalf("NormalizeDate(%q) = %q, not in DateLayout", s, n)
		}
		if again, ok := NormalizeDate(n); !ok || again != n {
			t.Fatalf("NormalizeDate(%q) = %q, then %q", s, n, again)
		}
	})
}

// FuzzListingToken: a document listing token a client sends either is
// refused or gives a key that encodes back to a token giving that key.
func FuzzListingToken(f *testing.F) {
	f.Add(encodeToken("0000000000000000/2a1b"))
	f.Add("")
	f.Add("%%")
	f.Add("AAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		k, err := decodeToken(tok)
		if err != nil {
			return
		}
		if back, err := decodeToken(encodeToken(k)); err != nil || back != k {
			t.Fatalf("key %q from %q does not round trip: %q, %v", k, tok, back, err)
		}
	})
}
