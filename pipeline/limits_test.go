package pipeline

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
		w, h, err := targetSize(tc.w, tc.h, tc.sw, tc.sh)
		if tc.want == "" && (err != nil || w != tc.ow || h != tc.oh) {
			t.Errorf("targetSize(%s, %s, %d, %d) = %d, %d, %v; want %d, %d", tc.w, tc.h, tc.sw, tc.sh, w, h, err, tc.ow, tc.oh)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("targetSize(%s, %s, %d, %d) = %d, %d, %v; want an error with %q", tc.w, tc.h, tc.sw, tc.sh, w, h, err, tc.want)
		}
	}
}

func TestParsePDFInfo(t *testing.T) {
	out := "Producer:        x\nPages:           10000\nEncrypted:       no\nPage    1 size:  612 x 792 pts (letter)\nPage    1 rot:   0\nPage    2 size:  595.276 x 841.89 pts (A4)\nFile size:       1 bytes\n"
	total, sizes := parsePDFInfo(out)
	if total != 10000 || len(sizes) != 2 || sizes[0] != [2]float64{612, 792} || sizes[1][1] != 841.89 {
		t.Fatalf("total %d sizes %v", total, sizes)
	}
	if total, sizes := parsePDFInfo("garbage"); total != 0 || len(sizes) != 0 {
		t.Fatalf("garbage: %d %v", total, sizes)
	}
}
