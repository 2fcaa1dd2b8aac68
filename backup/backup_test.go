package backup

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/storage"
)

// files are the data dir files the test archive carries, with their modes.
var files = []struct {
	name string
	mode os.FileMode
	body string
}{
	{"keys/token.key", 0o600, "token signing key"},
	{"keys/url.key", 0o600, "url signing key"},
	{"tls/cert.pem", 0o644, "-----BEGIN CERTIFICATE-----\nnot a real one\n"},
}

// content is a document's body: incompressible, longer than a data frame.
func content(id string) string {
	r := rand.New(rand.NewPCG(uint64(id[0]), 7))
	b := make([]byte, dataFrameLen+1000)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return string(b)
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func openDB(t *testing.T, dir string) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: dir, MinFreeBytes: -1, MinFreePercent: -1, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// archive builds a data dir with a store holding documents and the key
// and certificate files, and returns its archive.
func archive(t *testing.T) ([]byte, Info) {
	t.Helper()
	dataDir := t.TempDir()
	db := openDB(t, filepath.Join(dataDir, "db"))
	defer db.Close()
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		// Content larger than one 'D' frame, so the store spans frames.
		body := content(id)
		m, tail, err := storage.WriteContent(ctx, db, strings.NewReader(body), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Apply(ctx, storage.MustCommand(storage.OpAddDocuments, "default", "joe", time.Now(), storage.AddDocuments{
			Docs: []storage.NewDocument{{Document: storage.Document{DocumentID: id, Path: "docs/" + id + ".txt"}, Content: &m, Chunks: tail}},
		})); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		p := filepath.Join(dataDir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.body), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, f.mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	info, err := Write(&buf, db, dataDir, "test-1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), info
}

// TestRoundTrip: a restored data dir has the store's documents and
// content and the key files with their modes; Restore and Verify report
// what Write did.
func TestRoundTrip(t *testing.T) {
	arch, wrote := archive(t)
	if wrote.Keys == 0 || wrote.StoreBytes <= 2*dataFrameLen || len(wrote.Files) != len(files) {
		t.Fatalf("Write info %+v: want keys, more than two data frames of store, %d files", wrote, len(files))
	}
	verified, err := Verify(bytes.NewReader(arch), nil)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	var last int64
	got, err := Restore(bytes.NewReader(arch), dir, func(n int64) { last = n })
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	for _, i := range []Info{verified, got} {
		if i.Format != format || i.QuireVersion != "test-1.0" || i.Keys != wrote.Keys || i.Version != wrote.Version ||
			i.StoreBytes != wrote.StoreBytes || strings.Join(i.Files, ",") != strings.Join(wrote.Files, ",") {
			t.Fatalf("read info %+v, want as written %+v", i, wrote)
		}
	}
	if last != int64(len(arch)) {
		t.Fatalf("progress ended at %d bytes, archive has %d", last, len(arch))
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		b, err := os.ReadFile(p)
		if err != nil || string(b) != f.body {
			t.Fatalf("%s: %q %v, want %q", f.name, b, err, f.body)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != f.mode {
			t.Fatalf("%s: mode %v %v, want %v", f.name, fi.Mode().Perm(), err, f.mode)
		}
	}
	db := openDB(t, filepath.Join(dir, "db"))
	defer db.Close()
	for _, id := range []string{"a", "b"} {
		d, err := db.GetDocument("default", id)
		if err != nil || d.Path != "docs/"+id+".txt" {
			t.Fatalf("restored document %s: %+v %v", id, d, err)
		}
		rc, _, err := db.OpenContent("default", id)
		if err != nil {
			t.Fatalf("content of %s: %v", id, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(b) != content(id) {
			t.Fatalf("content of %s: %d bytes %v, want the %d bytes stored", id, len(b), err, len(content(id)))
		}
	}
}

type frame struct{ off, n int } // n: the payload's length

// frames returns the frames of arch by kind.
func frames(t *testing.T, arch []byte) map[byte][]frame {
	t.Helper()
	out := map[byte][]frame{}
	for off := len(magic); off < len(arch); {
		if off+5 > len(arch) {
			t.Fatalf("frame header cut at %d", off)
		}
		n := int(binary.BigEndian.Uint32(arch[off+1:]))
		out[arch[off]] = append(out[arch[off]], frame{off, n})
		off += 5 + n
	}
	return out
}

// TestDamage: a truncated archive, a flipped byte, a wrong magic or
// format is refused with a clear error by Verify and Restore, and Restore
// leaves the data dir empty.
func TestDamage(t *testing.T) {
	arch, _ := archive(t)
	fr := frames(t, arch)
	if len(fr['H']) != 1 || len(fr['F']) != len(files) || len(fr['D']) < 3 || len(fr['E']) != 1 {
		t.Fatalf("frames %v: want one header, %d files, 3+ data frames, one end", fr, len(files))
	}
	flip := func(off int) []byte {
		b := bytes.Clone(arch)
		b[off] ^= 0x20
		return b
	}
	endAt := fr['E'][0].off
	cases := []struct {
		name    string
		arch    []byte
		corrupt bool   // errors.Is(err, ErrCorrupt)
		msg     string // in the error
	}{
		{"empty", nil, true, "not a Quire backup"},
		{"cut in the magic", arch[:4], true, "not a Quire backup"},
		{"cut in the header", arch[:fr['H'][0].off+7], true, "no header"},
		{"cut in a file frame", arch[:fr['F'][1].off+9], true, "unexpected EOF"},
		{"cut in the store", arch[:fr['D'][1].off+100], true, "unexpected EOF"},
		{"cut between frames", arch[:fr['D'][2].off], true, "unexpected EOF"},
		{"cut before the end frame", arch[:endAt], true, "unexpected EOF"},
		{"cut in the end frame", arch[:len(arch)-3], true, "unexpected EOF"},
		{"wrong magic", append([]byte("QUIREBK2"), arch[len(magic):]...), true, "not a Quire backup"},
		{"not an archive", []byte("PK\x03\x04 a zip file, not an archive"), true, "not a Quire backup"},
		{"newer format", bytes.Replace(arch, []byte(`{"format":1,`), []byte(`{"format":9,`), 1), false, "backup format 9 is not supported"},
		{"flipped byte in a key file", flip(fr['F'][0].off + 5 + 20), true, "checksum mismatch"},
		{"flipped byte in the store", flip(fr['D'][1].off + 5 + 12345), true, "checksum mismatch"},
		{"flipped byte in the last store frame", flip(endAt - 1), true, "checksum mismatch"},
		{"flipped frame kind", flip(fr['D'][0].off), true, "unknown frame"},
		{"flipped frame length", flip(fr['D'][0].off + 1), true, "frame of"},
		{"flipped byte in the checksum", flip(len(arch) - 10), true, "checksum mismatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "newer format" && bytes.Equal(c.arch, arch) {
				t.Fatal("the header's format field was not found to change")
			}
			_, verr := Verify(bytes.NewReader(c.arch), nil)
			dir := filepath.Join(t.TempDir(), "restored")
			_, rerr := Restore(bytes.NewReader(c.arch), dir, nil)
			for _, err := range []error{verr, rerr} {
				if err == nil {
					t.Fatal("accepted")
				}
				if errors.Is(err, ErrCorrupt) != c.corrupt || !strings.Contains(err.Error(), c.msg) {
					t.Fatalf("error %q (ErrCorrupt %v), want ErrCorrupt %v and %q", err, errors.Is(err, ErrCorrupt), c.corrupt, c.msg)
				}
			}
			if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused restore left the data dir it made behind (stat: %v)", err)
			}
			// A directory that was there, empty, stays there, empty.
			made := t.TempDir()
			if _, err := Restore(bytes.NewReader(c.arch), made, nil); err == nil {
				t.Fatal("accepted into an existing empty dir")
			}
			left, err := os.ReadDir(made)
			if err != nil || len(left) > 0 {
				t.Fatalf("a refused restore into an existing empty dir left %v (%v)", left, err)
			}
		})
	}
}

// TestEveryFlipDetected: no single flipped byte anywhere in an archive
// passes Verify (the end frame included: its counts are what a restore
// reports).
func TestEveryFlipDetected(t *testing.T) {
	arch, _ := archive(t)
	fr := frames(t, arch)
	// Every byte outside the store's frames, and a sample inside them
	// (each flip there is a full read of the archive).
	var offs []int
	for off := range arch {
		inData := false
		for _, d := range fr['D'] {
			inData = inData || off > d.off+5+64 && off < d.off+5+d.n-64
		}
		if !inData || off%99991 == 0 {
			offs = append(offs, off)
		}
	}
	var passed []int
	for _, off := range offs {
		arch[off] ^= 0x01 // flipped in place, and back: a copy per flip was most of the test's time
		if _, err := Verify(bytes.NewReader(arch), nil); err == nil {
			passed = append(passed, off)
		}
		arch[off] ^= 0x01
	}
	if len(passed) > 0 {
		t.Fatalf("%d of %d single-byte flips passed Verify, at offsets %v (archive %d bytes, end frame at %d)",
			len(passed), len(offs), passed[:min(len(passed), 20)], len(arch), fr['E'][0].off)
	}
}

// TestRestore_RefusesNonEmptyDir: a restore never mixes with an existing
// data dir, and leaves what is there alone.
func TestRestore_RefusesNonEmptyDir(t *testing.T) {
	arch, _ := archive(t)
	dir := t.TempDir()
	keep := filepath.Join(dir, "quire.toml")
	if err := os.WriteFile(keep, []byte("listen = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(bytes.NewReader(arch), dir, nil); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a used dir: %v, want refused as not empty", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "listen = \"x\"\n" {
		t.Fatalf("the refused restore touched %s: %q %v", keep, b, err)
	}
}

// TestEndWithoutSum: archives written before the end frame had its own
// sum are still read; a damaged one is still refused.
func TestEndWithoutSum(t *testing.T) {
	arch, wrote := archive(t)
	e := frames(t, arch)['E'][0]
	var old end
	if err := json.Unmarshal(arch[e.off+5:], &old); err != nil || old.Sum == "" {
		t.Fatalf("end frame %q: %v, want one with a sum", arch[e.off+5:], err)
	}
	old.Sum = ""
	p, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	b := append(bytes.Clone(arch[:e.off]), 'E')
	b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
	b = append(b, p...)
	info, err := Verify(bytes.NewReader(b), nil)
	if err != nil || info.Keys != wrote.Keys {
		t.Fatalf("Verify of an archive without the end sum: %+v %v", info, err)
	}
	b[e.off-1] ^= 1 // the last store byte
	if _, err := Verify(bytes.NewReader(b), nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a damaged archive without the end sum: %v, want ErrCorrupt", err)
	}
}

// TestParseFile_RefusesUnsafeNames (issue 43, finding 3): a file name in
// an archive becomes a path under the data dir only when it is a safe
// segment on every OS, in keys/ or tls/.
func TestParseFile_RefusesUnsafeNames(t *testing.T) {
	frame := func(name string) []byte {
		b := binary.BigEndian.AppendUint16(nil, uint16(len(name)))
		b = append(b, name...)
		return binary.BigEndian.AppendUint32(b, 0o600)
	}
	for _, name := range []string{"keys/jwt-signing.pem", "tls/cert.pem"} {
		if _, _, _, _, err := parseFile(frame(name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"keys/..", "keys/../db", "../keys/x", "keys/con", "keys/NUL.pem", "keys/a:b", `keys/..\x`,
		"tls/com1", "keys/x.", "db/MANIFEST", "keys/a\x00b", "keys/"} {
		if _, _, _, _, err := parseFile(frame(name)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", name, err)
		}
	}
}
