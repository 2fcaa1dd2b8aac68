package storage

// Attribute value encoding: index encodings, numbers and dates in
// their stored and display forms, and sorted unions of values.

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// indexValues returns the index encodings of a's values.
func (a *DocAttribute) indexValues() []string {
	var out []string
	out = append(out, a.Strings...)
	for _, n := range a.Numbers {
		out = append(out, EncodeNumber(n))
	}
	if a.Boolean != nil {
		out = append(out, strconv.FormatBool(*a.Boolean))
	}
	for _, e := range a.Entities {
		out = append(out, e.EntityTypeID+"#"+e.EntityID)
	}
	if len(out) == 0 {
		out = []string{""} // KEY_ONLY
	}
	return out
}

// EncodeNumber encodes f so that the encodings sort like the numbers.
func EncodeNumber(f float64) string {
	if f == 0 {
		f = 0 // -0 is 0: its bits would encode below every negative number and decode to NaN
	}
	b := math.Float64bits(f)
	if f >= 0 {
		b ^= 1 << 63
	} else {
		b = ^b
	}
	return fmt.Sprintf("%016x", b)
}

// DateLayout is how DATE values are stored and returned: ISO 8601 in UTC.
const DateLayout = "2006-01-02T15:04:05Z"

var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05.999Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// NormalizeDate parses an ISO 8601 date or date-time and returns it in UTC
// in DateLayout. A value without a zone is taken as UTC; one whose UTC
// year has no four digits (9999-12-31T23:00-02:00) is refused, as
// DateLayout cannot hold it.
func NormalizeDate(s string) (string, bool) {
	for _, l := range dateLayouts {
		if tm, err := time.Parse(l, s); err == nil {
			if y := tm.UTC().Year(); y < 0 || y > 9999 {
				return "", false
			}
			return tm.UTC().Format(DateLayout), true
		}
	}
	return "", false
}

// FormatNumber writes n as JSON would, without an exponent for integers.
func FormatNumber(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// normalize sorts and de-duplicates values: multi-values read back sorted.
func (a *DocAttribute) normalize() {
	a.Strings = unionStrings(nil, a.Strings)
	a.Numbers = unionNumbers(nil, a.Numbers)
	a.Entities = unionEntities(nil, a.Entities)
}

func collect(one *string, many []string) []string {
	var out []string
	if one != nil {
		out = append(out, *one)
	}
	return append(out, many...)
}

func unionStrings(a, b []string) []string {
	out := append(append([]string(nil), a...), b...)
	sort.Strings(out)
	return slices.Compact(out)
}

func unionNumbers(a, b []float64) []float64 {
	out := append(append([]float64(nil), a...), b...)
	sort.Float64s(out)
	return slices.Compact(out)
}

func unionEntities(a, b []EntityRef) []EntityRef {
	out := append(append([]EntityRef(nil), a...), b...)
	sort.Slice(out, func(i, j int) bool {
		return out[i].EntityTypeID+"#"+out[i].EntityID < out[j].EntityTypeID+"#"+out[j].EntityID
	})
	return slices.Compact(out)
}

// displayValues returns the values as strings, the way clients compare
// them with allowed values.
func (a *DocAttribute) displayValues() []string {
	out := append([]string(nil), a.Strings...)
	for _, n := range a.Numbers {
		out = append(out, FormatNumber(n))
	}
	if a.Boolean != nil {
		out = append(out, strconv.FormatBool(*a.Boolean))
	}
	for _, e := range a.Entities {
		out = append(out, e.EntityID)
	}
	return out
}
