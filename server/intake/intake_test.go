package intake_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// intakeFile is one part of a multipart intake post.
type intakeFile struct {
	name, contentType string
	body              []byte
}

// postIntake posts files to a profile with Go's multipart writer, as a
// script would.
func postIntake(s *quiretest.Server, key, profile string, files ...intakeFile) *quiretest.Response {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+f.name+`"`)
		if f.contentType != "" {
			h.Set("Content-Type", f.contentType)
		}
		w, err := mw.CreatePart(h)
		if err == nil {
			_, err = w.Write(f.body)
		}
		if err != nil {
			return &quiretest.Response{Err: err, Body: []byte(err.Error())}
		}
	}
	mw.Close()
	return s.DoHeaders(http.MethodPost, "/sites/default/intake/"+profile, buf.Bytes(), key, map[string]string{"Content-Type": mw.FormDataContentType()})
}

func TestIntakeProfiles_ManagedByGovernors(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "finance", "pathTemplate": "Finance/{yyyy}/{filename}",
		"tags": []map[string]any{{"key": "source", "value": "{source}"}}, "duplicates": "keep_both"})
	r := s.Do(http.MethodGet, "/sites/default/intakeProfiles/finance", nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	p := quiretest.Obj(t, r.JSON(t)["intakeProfile"])
	if quiretest.Str(t, p, "pathTemplate") != "Finance/{yyyy}/{filename}" || quiretest.Str(t, p, "duplicates") != "KEEP_BOTH" ||
		quiretest.Str(t, p, "userId") != "admin" || !strings.HasSuffix(quiretest.Str(t, p, "intakeUrl"), "/sites/default/intake/finance") {
		t.Errorf("profile = %v", p)
	}
	acts := quiretest.List(t, p, "actions")
	if len(acts) != 2 || quiretest.Str(t, quiretest.Obj(t, acts[0]), "type") != "OCR" || quiretest.Str(t, quiretest.Obj(t, acts[1]), "type") != "FULLTEXT" {
		t.Errorf("default actions = %v, want OCR then FULLTEXT", acts)
	}
	// The name is taken.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "finance"}}, admin), http.StatusConflict)
	// Replaced: fields left out take their defaults.
	servertest.MustStatus(t, s.Do(http.MethodPut, "/sites/default/intakeProfiles/finance", map[string]any{"intakeProfile": map[string]any{"actions": []any{}}}, admin), http.StatusOK)
	p = quiretest.Obj(t, s.Do(http.MethodGet, "/sites/default/intakeProfiles/finance", nil, admin).JSON(t)["intakeProfile"])
	if len(quiretest.List(t, p, "actions")) != 0 || quiretest.Str(t, p, "duplicates") != "SKIP" || quiretest.Str(t, p, "pathTemplate") != "Inbox/{yyyy}-{mm}/{source}/{filename}" {
		t.Errorf("replaced profile = %v", p)
	}
	l := s.Do(http.MethodGet, "/sites/default/intakeProfiles", nil, admin)
	servertest.MustStatus(t, l, http.StatusOK)
	if n := len(quiretest.List(t, l.JSON(t), "intakeProfiles")); n != 1 {
		t.Errorf("%d profiles listed, want 1", n)
	}
	// GOVERN only: a writer can neither list nor make one.
	writer := s.Token("walt", "default")
	servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/default/intakeProfiles", nil, writer), http.StatusUnauthorized)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "w"}}, writer), http.StatusUnauthorized)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/sites/default/intakeProfiles/finance", nil, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/default/intakeProfiles/finance", nil, admin), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/sites/default/intakeProfiles/finance", nil, admin), http.StatusNotFound)
}

func TestIntakeProfiles_Validation(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, tt := range []struct {
		name    string
		profile map[string]any
		key     string
	}{
		{"no name", map[string]any{}, "name"},
		{"upper case name", map[string]any{"name": "Finance"}, "name"},
		{"slash in name", map[string]any{"name": "a/b"}, "name"},
		{"unknown placeholder", map[string]any{"name": "p", "pathTemplate": "In/{year}/{filename}"}, "pathTemplate"},
		{"unbalanced brace", map[string]any{"name": "p", "pathTemplate": "In/{yyyy/{filename}"}, "pathTemplate"},
		{"dot dot", map[string]any{"name": "p", "pathTemplate": "In/../{filename}"}, "pathTemplate"},
		{"empty segment", map[string]any{"name": "p", "pathTemplate": "In//{filename}"}, "pathTemplate"},
		{"backslash", map[string]any{"name": "p", "pathTemplate": `In\{filename}`}, "pathTemplate"},
		{"folder inside a segment", map[string]any{"name": "p", "pathTemplate": "In/x{folder}/{filename}"}, "pathTemplate"},
		{"control character", map[string]any{"name": "p", "pathTemplate": "In/\u0001{filename}"}, "pathTemplate"},
		{"duplicates", map[string]any{"name": "p", "duplicates": "MERGE"}, "duplicates"},
		{"unknown action", map[string]any{"name": "p", "actions": []map[string]any{{"type": "TELEPORT"}}}, "type"},
		{"move action", map[string]any{"name": "p", "actions": []map[string]any{{"type": "MOVE", "parameters": map[string]any{"path": "x/"}}}}, "actions"},
		{"tag value placeholder", map[string]any{"name": "p", "tags": []map[string]any{{"key": "k", "value": "{nope}"}}}, "tags"},
		{"attribute without value", map[string]any{"name": "p", "attributes": []map[string]any{{"key": "k"}}}, "attributes"},
		{"watched folder without a root", map[string]any{"name": "p", "watchFolder": map[string]any{"enabled": true}}, "watchFolder"},
		{"empty user", map[string]any{"name": "p", "userId": ""}, "userId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/sites/default/intakeProfiles", map[string]any{"intakeProfile": tt.profile}, admin)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			if !strings.Contains(string(r.Body), `"key":"`+tt.key+`"`) {
				t.Errorf("body %s does not name key %q", r.Body, tt.key)
			}
		})
	}
	l := s.Do(http.MethodGet, "/sites/default/intakeProfiles", nil, admin)
	if n := len(quiretest.List(t, l.JSON(t), "intakeProfiles")); n != 0 {
		t.Errorf("%d profiles stored after refusals, want 0", n)
	}
}

// TestIntakePost_Multipart posts files with Go's multipart client and an
// API key: each becomes a document at the template's path with the
// profile's tags and actions; the duplicate policies decide a second
// post of the same bytes.
func TestIntakePost_Multipart(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "skip", "pathTemplate": "Scans/{source}/{name}-{yyyy}.{ext}",
		"tags": []map[string]any{{"key": "via", "value": "{source}/{profile}"}}})
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "both", "pathTemplate": "Both/{filename}", "duplicates": "KEEP_BOTH", "actions": []any{}})
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "version", "pathTemplate": "Ver/{filename}", "duplicates": "VERSION", "actions": []any{}})

	pdf := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("scan "), 1000)...)
	r := postIntake(s, key, "skip", intakeFile{name: "invoice.pdf", body: pdf}, intakeFile{name: "note.txt", contentType: "text/plain", body: []byte("hello intake")})
	servertest.MustStatus(t, r, http.StatusCreated)
	m := r.JSON(t)
	docs := quiretest.List(t, m, "documents")
	if len(docs) != 2 || len(quiretest.List(t, m, "skipped")) != 0 {
		t.Fatalf("answer %s, want two documents", r.Body)
	}
	first := quiretest.Obj(t, docs[0])
	id := quiretest.Str(t, first, "documentId")
	if p := quiretest.Str(t, first, "path"); !strings.HasPrefix(p, "Scans/post/invoice-") || !strings.HasSuffix(p, ".pdf") || quiretest.Str(t, first, "status") != "CREATED" {
		t.Errorf("first file = %v", first)
	}
	d := s.Do(http.MethodGet, "/documents/"+id, nil, admin).JSON(t)
	if quiretest.Str(t, d, "contentType") != "application/pdf" || quiretest.Str(t, d, "userId") != "admin" || quiretest.Str(t, d, "checksumType") != "SHA256" {
		t.Errorf("document = %v", d)
	}
	if got := servertest.Download(t, s, admin, "", id); !bytes.Equal(got, pdf) {
		t.Errorf("content of %d bytes read back as %d bytes", len(pdf), len(got))
	}
	tag := s.Do(http.MethodGet, "/documents/"+id+"/tags/via", nil, admin)
	servertest.MustStatus(t, tag, http.StatusOK)
	if v := quiretest.Str(t, tag.JSON(t), "value"); v != "post/skip" {
		t.Errorf("tag via = %q, want post/skip", v)
	}
	acts := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, admin)
	servertest.MustStatus(t, acts, http.StatusOK)
	al := quiretest.List(t, acts.JSON(t), "actions")
	if len(al) != 2 || quiretest.Str(t, quiretest.Obj(t, al[0]), "type") != "OCR" || quiretest.Str(t, quiretest.Obj(t, al[1]), "type") != "FULLTEXT" {
		t.Errorf("actions = %v, want OCR then FULLTEXT", al)
	}
	txt := quiretest.Str(t, quiretest.Obj(t, docs[1]), "documentId")
	if got := servertest.Download(t, s, admin, "", txt); string(got) != "hello intake" {
		t.Errorf("content = %q", got)
	}

	// SKIP: the same bytes again make nothing and name the first.
	r = postIntake(s, key, "skip", intakeFile{name: "again.pdf", body: pdf})
	servertest.MustStatus(t, r, http.StatusOK)
	sk := quiretest.List(t, r.JSON(t), "skipped")
	if len(sk) != 1 || quiretest.Str(t, quiretest.Obj(t, sk[0]), "documentId") != id {
		t.Errorf("skipped = %v, want the first document %s", sk, id)
	}
	// KEEP_BOTH: a second document.
	r = postIntake(s, key, "both", intakeFile{name: "again.pdf", body: pdf})
	servertest.MustStatus(t, r, http.StatusCreated)
	both := quiretest.Str(t, quiretest.Item(t, r.JSON(t), "documents", 0), "documentId")
	if both == id {
		t.Errorf("KEEP_BOTH answered the existing document")
	}
	// VERSION: the newest holder of the content takes the new path, and
	// its old state is a version.
	r = postIntake(s, key, "version", intakeFile{name: "renamed.pdf", body: pdf})
	servertest.MustStatus(t, r, http.StatusCreated)
	v := quiretest.Item(t, r.JSON(t), "documents", 0)
	if quiretest.Str(t, v, "documentId") != both || quiretest.Str(t, v, "status") != "VERSIONED" || quiretest.Str(t, v, "path") != "Ver/renamed.pdf" {
		t.Errorf("VERSION answered %v, want document %s at Ver/renamed.pdf", v, both)
	}
	vs := s.Do(http.MethodGet, "/documents/"+both+"/versions", nil, admin)
	servertest.MustStatus(t, vs, http.StatusOK)
	if n := len(quiretest.List(t, vs.JSON(t), "documents")); n < 2 {
		t.Errorf("%d versions listed, want the current and the earlier one: %s", n, vs.Body)
	}
}

// TestIntakePost_Refusals: limits and bad bodies refuse the whole post
// before any document exists.
func TestIntakePost_Refusals(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "p", "actions": []any{}})
	servertest.SetSiteConfig(t, s, admin, "", map[string]any{"maxContentLengthBytes": "1000"})
	many := make([]intakeFile, 51)
	for i := range many {
		many[i] = intakeFile{name: fmt.Sprintf("f%d.txt", i), body: []byte(fmt.Sprintf("file %d", i))}
	}
	for _, tt := range []struct {
		name string
		do   func() *quiretest.Response
		want int
	}{
		{"one file over the site limit", func() *quiretest.Response {
			return postIntake(s, key, "p", intakeFile{name: "small.txt", body: []byte("ok")}, intakeFile{name: "big.bin", body: bytes.Repeat([]byte{7}, 5000)})
		}, http.StatusBadRequest},
		{"empty file", func() *quiretest.Response {
			return postIntake(s, key, "p", intakeFile{name: "small.txt", body: []byte("ok")}, intakeFile{name: "empty.txt"})
		}, http.StatusBadRequest},
		{"too many files", func() *quiretest.Response { return postIntake(s, key, "p", many...) }, http.StatusBadRequest},
		{"no file", func() *quiretest.Response { return postIntake(s, key, "p") }, http.StatusBadRequest},
		{"not multipart", func() *quiretest.Response {
			return s.DoHeaders(http.MethodPost, "/sites/default/intake/p", "data", key, map[string]string{"Content-Type": "text/plain"})
		}, http.StatusUnsupportedMediaType},
		{"broken body", func() *quiretest.Response {
			return s.DoHeaders(http.MethodPost, "/sites/default/intake/p", "--xx\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nabc", key,
				map[string]string{"Content-Type": "multipart/form-data; boundary=xx"})
		}, http.StatusBadRequest},
		{"invalid UTF-8 file name", func() *quiretest.Response {
			return postIntake(s, key, "p", intakeFile{name: "bad\xff.txt", body: []byte("x")})
		}, http.StatusBadRequest},
		{"unknown profile", func() *quiretest.Response {
			return postIntake(s, key, "nope", intakeFile{name: "a.txt", body: []byte("x")})
		}, http.StatusNotFound},
		{"no key", func() *quiretest.Response {
			return postIntake(s, "", "p", intakeFile{name: "a.txt", body: []byte("x")})
		}, http.StatusUnauthorized},
		{"read-only key", func() *quiretest.Response {
			return postIntake(s, servertest.APIKey(t, s, "READ"), "p", intakeFile{name: "a.txt", body: []byte("x")})
		}, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, tt.do(), tt.want)
		})
	}
	l := s.Do(http.MethodGet, "/documents", nil, admin)
	servertest.MustStatus(t, l, http.StatusOK)
	if n := len(quiretest.List(t, l.JSON(t), "documents")); n != 0 {
		t.Errorf("%d documents after refused posts, want 0: %s", n, l.Body)
	}
	// The files' own refusals are in the profile's error list.
	e := s.Do(http.MethodGet, "/sites/default/intakeProfiles/p/errors", nil, admin)
	servertest.MustStatus(t, e, http.StatusOK)
	var names []string
	for _, x := range quiretest.List(t, e.JSON(t), "errors") {
		m := quiretest.Obj(t, x)
		names = append(names, quiretest.Str(t, m, "fileName")+": "+quiretest.Str(t, m, "error"))
	}
	if len(names) != 2 || !strings.HasPrefix(names[0], "empty.txt: ") || !strings.HasPrefix(names[1], "big.bin: the file is larger") {
		t.Errorf("errors = %q, want empty.txt then big.bin (newest first)", names)
	}
}

// TestIntakePost_Curl posts with the real curl, as the README says.
func TestIntakePost_Curl(t *testing.T) {
	curl := quiretest.NeedProgram(t, "curl", "curl")
	s := quiretest.NewServer(t)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scripts", "pathTemplate": "Inbox/{filename}", "actions": []any{}})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "scan one.pdf"), filepath.Join(dir, "scan2.jpg")
	if err := os.WriteFile(a, append([]byte("%PDF-1.5\n"), bytes.Repeat([]byte("x"), 3<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00 not much of a jpeg"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(curl, "-sS", "--max-time", "60", "-H", "Authorization: "+key,
		"-F", "file=@"+a, "-F", "file=@"+b, "-w", "\n%{http_code}", s.URL+"/sites/default/intake/scripts").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v: %s", err, out)
	}
	body, code, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if code != "201" {
		t.Fatalf("curl got %s: %s", code, body)
	}
	r := &quiretest.Response{Status: 201, Body: []byte(body)}
	m := r.JSON(t)
	docs := quiretest.List(t, m, "documents")
	if len(docs) != 2 {
		t.Fatalf("answer %s, want two documents", body)
	}
	for i, want := range []struct{ path, ct string }{{"Inbox/scan one.pdf", "application/pdf"}, {"Inbox/scan2.jpg", "image/jpeg"}} {
		d := quiretest.Obj(t, docs[i])
		if quiretest.Str(t, d, "path") != want.path {
			t.Errorf("file %d path = %v, want %s", i, d["path"], want.path)
		}
		doc := s.Do(http.MethodGet, "/documents/"+quiretest.Str(t, d, "documentId"), nil, admin).JSON(t)
		if quiretest.Str(t, doc, "contentType") != want.ct {
			t.Errorf("file %d contentType = %v, want %s", i, doc["contentType"], want.ct)
		}
	}
	got := servertest.Download(t, s, admin, "", quiretest.Str(t, quiretest.Obj(t, docs[0]), "documentId"))
	want, _ := os.ReadFile(a)
	if !bytes.Equal(got, want) {
		t.Errorf("content of %d bytes read back as %d bytes", len(want), len(got))
	}
}

// TestIntakePost_ConcurrentDuplicates: the same file posted by eight
// clients at once under SKIP makes one document; the policy is decided
// in the writing transaction, not by a read before it.
func TestIntakePost_ConcurrentDuplicates(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	key := servertest.APIKey(t, s, "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "p", "pathTemplate": "In/{filename}", "actions": []any{}})
	body := bytes.Repeat([]byte("same scan "), 200000) // 2 MB: written in chunks before the commit
	const n = 8
	results := make(chan *quiretest.Response, n)
	for i := 0; i < n; i++ {
		go func() { results <- postIntake(s, key, "p", intakeFile{name: "same.pdf", body: body}) }()
	}
	created, skipped := 0, 0
	for i := 0; i < n; i++ {
		r := <-results
		switch r.Status {
		case http.StatusCreated:
			created++
		case http.StatusOK:
			skipped++
		default:
			t.Errorf("status %d: %s", r.Status, r.Body)
		}
	}
	if created != 1 || skipped != n-1 {
		t.Errorf("%d created, %d skipped; want 1 and %d", created, skipped, n-1)
	}
	if d := docsByPath(t, s, admin); len(d) != 1 {
		t.Errorf("documents %v, want one", d)
	}
}
