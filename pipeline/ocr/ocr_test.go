package ocr

import "testing"

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
