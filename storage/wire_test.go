package storage

import (
	"bytes"
	"crypto/rand"
	"reflect"
	"testing"
	"unsafe"
)

// A chunk command travels in the binary form: no base64, the values of
// the decoded command are the encoded bytes themselves, re-encoding a
// decoded command gives the bytes it came from, and every truncation or
// corruption is an error, never a panic or a half command.
func TestWire_ChunkCommandsAreBinary(t *testing.T) {
	t.Parallel() // own store, no package or process state
	big := make([]byte, ChunkSize+1)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	big[0] = codecRaw
	p := PutChunks{Chunks: []Chunk{
		{SHA: "aa11", Size: ChunkSize, Value: big},
		{SHA: "bb22", Size: 0, Value: []byte{codecRaw}},
	}}
	c := MustCommand(OpPutChunks, "default", "joe", t0, p)
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != wireChunks || len(b) > len(big)+200 {
		t.Fatalf("chunk command encoded as version %d in %d bytes for %d bytes of values", b[0], len(b), len(big)+1)
	}
	got, err := DecodeCommand(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Op != OpPutChunks || got.Site != "default" || got.User != "joe" || !got.At.Equal(t0) {
		t.Fatalf("decoded header %+v", got)
	}
	dp, err := decode[PutChunks](got)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*dp, p) {
		t.Fatal("decoded chunks differ from the encoded ones")
	}
	v := dp.Chunks[0].Value
	start, end := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&b[len(b)-1]))
	if at := uintptr(unsafe.Pointer(&v[0])); at < start || at > end {
		t.Fatal("the decoded value is a copy, not a slice of the encoded bytes")
	}
	if cap(v) != len(v) {
		t.Fatalf("a decoded value can grow into its neighbour (len %d cap %d)", len(v), cap(v))
	}
	b2, err := got.Encode()
	if err != nil || !bytes.Equal(b, b2) || &b2[0] != &b[0] {
		t.Fatalf("re-encoding a decoded chunk command made new bytes (%v)", err)
	}

	// Applied to a store, the decoded command stores the chunks.
	d := mustOpen(t)
	if _, err := d.Apply(t.Context(), got); err != nil {
		t.Fatal(err)
	}

	for n := 1; n < len(b); n += 1 + n/7 {
		if _, err := DecodeCommand(b[:n]); err == nil {
			t.Fatalf("a chunk command cut at %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := DecodeCommand(append(append([]byte{}, b...), 0)); err == nil {
		t.Fatal("a chunk command with a trailing byte decoded")
	}
	other := MustCommand(OpSetTags, "default", "joe", t0, SetTags{DocumentID: "x", Mode: "add"})
	ob, err := other.Encode()
	if err != nil || ob[0] != wireJSON {
		t.Fatalf("a command without chunks is not JSON: version %d (%v)", ob[0], err)
	}
	hdr := []byte(`{"op":"SetTags","at":"2026-01-01T00:00:00Z"}`)
	forged := append([]byte{wireChunks, byte(len(hdr))}, hdr...)
	forged = append(forged, 0)
	if _, err := DecodeCommand(forged); err == nil {
		t.Fatal("a binary command of another op decoded")
	}
}
