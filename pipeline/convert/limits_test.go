package convert

import (
	"strings"
	"testing"
)

func TestTargetSize_Limits(t *testing.T) {
	for _, tc := range []struct {
		w, h   string
		sw, sh int
		want   string // "" or part of the error
		ow, oh int
	}{
		{"100", "auto", 200, 100, "", 100, 50},
		{"auto", "20000", 1, 50_000_000, "", 1, 20000},
		{"auto", "20000", 50_000_000, 1, "too large", 0, 0},
		{"20000", "auto", 2, 2000, "too large", 0, 0},
		{"9000", "9000", 10, 10, "too large", 0, 0},
		{"20001", "10", 10, 10, "invalid size", 0, 0},
		{"auto", "auto", 10, 10, "cannot both be 'auto'", 0, 0},
	} {
		w, h, err := TargetSize(tc.w, tc.h, tc.sw, tc.sh)
		if tc.want == "" && (err != nil || w != tc.ow || h != tc.oh) {
			t.Errorf("TargetSize(%s, %s, %d, %d) = %d, %d, %v; want %d, %d", tc.w, tc.h, tc.sw, tc.sh, w, h, err, tc.ow, tc.oh)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("TargetSize(%s, %s, %d, %d) = %d, %d, %v; want an error with %q", tc.w, tc.h, tc.sw, tc.sh, w, h, err, tc.want)
		}
	}
}
