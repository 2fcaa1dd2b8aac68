package intake_test

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// intakeRoot makes a node poll watched folders under root every 100 ms.
func intakeRoot(root string) quiretest.Option {
	return func(c *quiretest.Config) {
		c.Intake = node.IntakeConfig{FolderRoot: root, Poll: 100 * time.Millisecond}
	}
}

// docsByPath lists site default's documents by path.
func docsByPath(t *testing.T, s *quiretest.Server, tok string) map[string][]string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents?limit=100", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	out := map[string][]string{}
	for _, d := range quiretest.List(t, r.JSON(t), "documents") {
		m := quiretest.Obj(t, d)
		p := quiretest.Str(t, m, "path")
		out[p] = append(out[p], quiretest.Str(t, m, "documentId"))
	}
	return out
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return !errors.Is(err, fs.ErrNotExist)
}

// writeSlowly writes data to path in n pieces, pausing between them, as a
// scanner writing a long job does.
func writeSlowly(t *testing.T, path string, data []byte, n int, pause time.Duration) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	step := (len(data) + n - 1) / n
	for i := 0; i < len(data); i += step {
		if _, err := f.Write(data[i:min(i+step, len(data))]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
	}
}

// TestIntakeFolder_TakesStableFiles: a file in a profile's watched folder
// becomes a document once unchanged for stableSeconds, its subfolders
// path segments, and moves to done/; a file written slowly is taken once,
// whole; a file the intake refuses goes to failed/ with its error beside
// it and in the profile's error list; DELETE removes taken files.
func TestIntakeFolder_TakesStableFiles(t *testing.T) {
	root := t.TempDir()
	s := quiretest.NewServer(t, intakeRoot(root))
	admin := s.Admin()
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scan", "pathTemplate": "Scans/{folder}/{filename}", "actions": []any{},
		"tags":        []map[string]any{{"key": "source", "value": "{source}"}},
		"watchFolder": map[string]any{"stableSeconds": 1}})
	p := quiretest.Obj(t, s.Do(http.MethodGet, "/sites/default/intakeProfiles/scan", nil, admin).JSON(t)["intakeProfile"])
	dir := quiretest.Str(t, quiretest.Obj(t, p["watchFolder"]), "path")
	if dir != filepath.Join(root, "default", "scan") {
		t.Fatalf("watch folder %s, want under %s", dir, root)
	}
	servertest.WaitFor(t, "the watched folder and done/, failed/", func() bool {
		return exists(filepath.Join(dir, "done")) && exists(filepath.Join(dir, "failed"))
	})
	if err := os.MkdirAll(filepath.Join(dir, "Invoices", "2026"), 0o755); err != nil {
		t.Fatal(err)
	}
	quick := []byte("%PDF-1.4\nquick scan\n")
	if err := os.WriteFile(filepath.Join(dir, "Invoices", "2026", "a.pdf"), quick, 0o644); err != nil {
		t.Fatal(err)
	}
	// Hidden and temporary files are left alone.
	for _, n := range []string{".hidden.pdf", "~lock.pdf", "partial.tmp"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("ignore me"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Symbolic links are never followed: not to a file outside the folder,
	// nor to a folder.
	secret := filepath.Join(t.TempDir(), "secret.pdf")
	if err := os.WriteFile(secret, []byte("%PDF-1.4 not for the share"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.pdf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	// Written slowly over ~3.5 s: each pause is shorter than stableSeconds.
	slow := bytes.Repeat([]byte("slow page "), 50000)
	writeSlowly(t, filepath.Join(dir, "slow.pdf"), slow, 7, 500*time.Millisecond)

	servertest.WaitFor(t, "both files taken", func() bool {
		d := docsByPath(t, s, admin)
		return len(d["Scans/Invoices/2026/a.pdf"]) == 1 && len(d["Scans/slow.pdf"]) == 1 &&
			exists(filepath.Join(dir, "done", "Invoices", "2026", "a.pdf")) && exists(filepath.Join(dir, "done", "slow.pdf"))
	})
	d := docsByPath(t, s, admin)
	if got := servertest.Download(t, s, admin, "", d["Scans/slow.pdf"][0]); !bytes.Equal(got, slow) {
		t.Errorf("slow file read back as %d bytes, want %d", len(got), len(slow))
	}
	tag := s.Do(http.MethodGet, "/documents/"+d["Scans/Invoices/2026/a.pdf"][0]+"/tags/source", nil, admin)
	if v := quiretest.Str(t, tag.JSON(t), "value"); v != "folder" {
		t.Errorf("tag source = %q, want folder", v)
	}
	if exists(filepath.Join(dir, "Invoices", "2026", "a.pdf")) || exists(filepath.Join(dir, "slow.pdf")) {
		t.Errorf("taken files are still in the watched folder")
	}
	for _, n := range []string{".hidden.pdf", "~lock.pdf", "partial.tmp", "link.pdf", "linkdir"} {
		if !exists(filepath.Join(dir, n)) {
			t.Errorf("%s was taken", n)
		}
	}
	if len(d) != 2 {
		t.Errorf("documents %v, want the two files only", d)
	}

	// A refusal: an attribute the site does not define.
	servertest.MustStatus(t, s.Do(http.MethodPut, "/sites/default/intakeProfiles/scan", map[string]any{"intakeProfile": map[string]any{
		"pathTemplate": "Scans/{filename}", "actions": []any{}, "attributes": []map[string]any{{"key": "undefined", "stringValue": "x"}},
		"watchFolder": map[string]any{"stableSeconds": 1}}}, admin), http.StatusOK)
	if err := os.WriteFile(filepath.Join(dir, "refused.pdf"), []byte("%PDF-1.4 refused"), 0o644); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, "the refused file in failed/", func() bool { return exists(filepath.Join(dir, "failed", "refused.pdf.error.txt")) })
	if !exists(filepath.Join(dir, "failed", "refused.pdf")) {
		t.Errorf("failed/refused.pdf missing")
	}
	msg, _ := os.ReadFile(filepath.Join(dir, "failed", "refused.pdf.error.txt"))
	if !strings.Contains(string(msg), "undefined") {
		t.Errorf("error text %q does not name the attribute", msg)
	}
	e := s.Do(http.MethodGet, "/sites/default/intakeProfiles/scan/errors", nil, admin)
	servertest.MustStatus(t, e, http.StatusOK)
	first := quiretest.Item(t, e.JSON(t), "errors", 0)
	if quiretest.Str(t, first, "fileName") != "refused.pdf" || quiretest.Str(t, first, "source") != "FOLDER" {
		t.Errorf("error entry = %v", first)
	}

	// onSuccess DELETE.
	servertest.MustStatus(t, s.Do(http.MethodPut, "/sites/default/intakeProfiles/scan", map[string]any{"intakeProfile": map[string]any{
		"pathTemplate": "Deleted/{filename}", "actions": []any{}, "watchFolder": map[string]any{"stableSeconds": 1, "onSuccess": "DELETE"}}}, admin), http.StatusOK)
	if err := os.WriteFile(filepath.Join(dir, "gone.pdf"), []byte("%PDF-1.4 gone"), 0o644); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, "gone.pdf taken and deleted", func() bool {
		return len(docsByPath(t, s, admin)["Deleted/gone.pdf"]) == 1 && !exists(filepath.Join(dir, "gone.pdf"))
	})
	if exists(filepath.Join(dir, "done", "gone.pdf")) {
		t.Errorf("gone.pdf was moved to done/ with onSuccess DELETE")
	}

	m := s.Do(http.MethodGet, "/metrics", nil, "")
	for _, want := range []string{`quire_intake_files_total{outcome="created",profile="scan",source="FOLDER"} 3`, `quire_intake_files_total{outcome="failed",profile="scan",source="FOLDER"} 1`} {
		if !strings.Contains(string(m.Body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestIntakeFolder_RestartMidFile closes the in-process server while a
// scanner is part way through a file and while a taken file is still in
// the folder (a crash after the commit and before the move), and opens it
// again on the same data dir: each file is one document, whole.
func TestIntakeFolder_RestartMidFile(t *testing.T) {
	root, data := t.TempDir(), t.TempDir()
	s := quiretest.StartServer(t, data, intakeRoot(root))
	admin := s.Admin()
	// KEEP_BOTH: only the journal, not the duplicate check, can tell the
	// repeat of a taken file from a new file with the same bytes.
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scan", "pathTemplate": "Scans/{filename}", "actions": []any{},
		"duplicates": "KEEP_BOTH", "watchFolder": map[string]any{"stableSeconds": 1}})
	dir := filepath.Join(root, "default", "scan")
	servertest.WaitFor(t, "the watched folder", func() bool { return exists(filepath.Join(dir, "done")) })

	// One file taken: it is the crash-after-commit case once put back
	// unchanged (same name, size and modification time).
	taken := []byte("%PDF-1.4 taken before the restart")
	if err := os.WriteFile(filepath.Join(dir, "taken.pdf"), taken, 0o644); err != nil {
		t.Fatal(err)
	}
	mtime := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(filepath.Join(dir, "taken.pdf"), mtime, mtime); err != nil {
		t.Fatal(err)
	}
	servertest.WaitFor(t, "taken.pdf taken", func() bool { return exists(filepath.Join(dir, "done", "taken.pdf")) })

	// A scanner part way through a file when the server stops.
	full := bytes.Repeat([]byte("page of a long scan "), 100000)
	f, err := os.Create(filepath.Join(dir, "long.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(full[:len(full)/3]); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// While it is down the scanner goes on, and the taken file is back as
	// it was when the intake committed.
	if _, err := f.Write(full[len(full)/3:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "taken.pdf"), taken, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(dir, "taken.pdf"), mtime, mtime); err != nil {
		t.Fatal(err)
	}

	s = quiretest.StartServer(t, data, intakeRoot(root))
	admin = s.Admin()
	servertest.WaitFor(t, "long.pdf taken and taken.pdf cleared again", func() bool {
		return exists(filepath.Join(dir, "done", "long.pdf")) && !exists(filepath.Join(dir, "taken.pdf"))
	})
	d := docsByPath(t, s, admin)
	if len(d["Scans/taken.pdf"]) != 1 || len(d["Scans/long.pdf"]) != 1 || len(d) != 2 {
		t.Fatalf("documents %v, want one of each file", d)
	}
	if got := servertest.Download(t, s, admin, "", d["Scans/long.pdf"][0]); !bytes.Equal(got, full) {
		t.Errorf("long.pdf read back as %d bytes, want %d", len(got), len(full))
	}
	if !exists(filepath.Join(dir, "done", "taken (1).pdf")) {
		t.Errorf("the repeated taken.pdf is not in done/ under a free name")
	}
	m := s.Do(http.MethodGet, "/metrics", nil, "")
	if !strings.Contains(string(m.Body), `quire_intake_files_total{outcome="repeated",profile="scan",source="FOLDER"} 1`) {
		t.Errorf("the repeat is not counted as repeated")
	}
}
