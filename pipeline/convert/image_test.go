package convert_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"

	"quire/pipeline/convert"
)

// pngOf encodes a w×h image.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is the start of a PNG that says it is w×h (a valid IHDR
// chunk), with no pixels after it.
func pngHeader(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

// TestThumbnail_Scale: an image is scaled to fit 256×256 keeping its
// proportions (a smaller one keeps its size); an image that says it has
// more pixels than a thumbnail may decode, or is no image, is refused
// before anything is decoded.
func TestThumbnail_Scale(t *testing.T) {
	for _, tt := range []struct {
		name    string
		in      []byte
		w, h    int
		wantErr string
	}{
		{"wide", pngOf(t, 1000, 500), 256, 128, ""},
		{"tall", pngOf(t, 300, 1200), 64, 256, ""},
		{"small stays", pngOf(t, 100, 50), 100, 50, ""},
		{"a bomb's header", pngHeader(100000, 100000), 0, 0, "too large for a thumbnail"},
		{"not an image", []byte("%PDF-1.4 not an image"), 0, 0, "read image"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := convert.Thumbnail(bytes.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("not a PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tt.w || b.Dy() != tt.h {
				t.Fatalf("%v, want %dx%d", b.Size(), tt.w, tt.h)
			}
		})
	}
}
