package content_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// examineUpload gets an examine URL, PUTs body to it and returns the id.
func examineUpload(t *testing.T, s *quiretest.Server, tok, site string, body []byte) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/objects/examine/pdf"+site, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	m := r.JSON(t)
	req, err := http.NewRequest(http.MethodPut, quiretest.Str(t, m, "uploadUrl"), bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT examine upload: %d", resp.StatusCode)
	}
	return quiretest.Str(t, m, "id")
}

func TestExaminePdf(t *testing.T) {
	quiretest.NeedProgram(t, "pdfinfo", "poppler-utils")
	qpdf := quiretest.NeedProgram(t, "qpdf", "qpdf")
	s := quiretest.NewServer(t)
	tok := s.Admin()
	form := quiretest.FormPDF("Invoice 7", [][2]string{{"name", "Ann Smith"}, {"total", "42.00"}})
	dir := t.TempDir()
	in, enc := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "enc.pdf")
	if err := os.WriteFile(in, form, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(qpdf, "--encrypt", "secret", "owner", "256", "--", in, enc).CombinedOutput(); err != nil {
		t.Fatalf("qpdf --encrypt: %v %s", err, out)
	}
	encrypted, err := os.ReadFile(enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := examineUpload(t, s, tok, site.Query, form)
			r := s.Do(http.MethodGet, "/objects/examine/"+id+"/pdf"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			fi := quiretest.Obj(t, r.JSON(t)["fileinfo"])
			if quiretest.Num(t, fi, "pages") != 1 || quiretest.Bool(t, fi, "encrypted") || quiretest.Bool(t, fi, "signed") {
				t.Errorf("fileinfo %v", fi)
			}
			if got := quiretest.Str(t, quiretest.Obj(t, fi["info"]), "Title"); got != "Invoice 7" {
				t.Errorf("Title = %q", got)
			}
			fields := quiretest.List(t, fi, "fields")
			want := [][2]string{{"name", "Ann Smith"}, {"total", "42.00"}}
			if len(fields) != len(want) {
				t.Fatalf("fields %v", fields)
			}
			for i, w := range want {
				f := quiretest.Obj(t, fields[i])
				if quiretest.Str(t, f, "field") != w[0] || quiretest.Str(t, f, "value") != w[1] || quiretest.Str(t, f, "type") != "text" {
					t.Errorf("field %d = %v, want %v", i, f, w)
				}
			}
			for _, tt := range []struct {
				name string
				body []byte
				want string
			}{
				{"not a PDF", []byte("hello, I am text"), `{"message":"the file is not a PDF"}`},
				{"encrypted", encrypted, `{"message":"the PDF is encrypted with a password"}`},
				{"broken", append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("garbage "), 1000)...), ""},
				{"truncated", form[:len(form)/2], ""},
			} {
				t.Run(tt.name, func(t *testing.T) {
					id := examineUpload(t, s, tok, site.Query, tt.body)
					r := s.Do(http.MethodGet, "/objects/examine/"+id+"/pdf"+site.Query, nil, tok)
					if tt.name == "truncated" && r.Status == http.StatusCreated {
						return // qpdf and pdfinfo recover some truncated files: an answer, not a 500
					}
					servertest.MustStatus(t, r, http.StatusBadRequest)
					if tt.want != "" {
						servertest.MustBody(t, r, tt.want)
					}
				})
			}
		})
	}
	t.Run("unknown id", func(t *testing.T) {
		servertest.MustStatus(t, s.Do(http.MethodGet, "/objects/examine/nope/pdf", nil, tok), http.StatusNotFound)
	})
	t.Run("another site's object", func(t *testing.T) {
		id := examineUpload(t, s, tok, "", form)
		servertest.MustStatus(t, s.Do(http.MethodGet, "/objects/examine/"+id+"/pdf?siteId=finance", nil, tok), http.StatusNotFound)
	})
	t.Run("bad signature", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPut, s.URL+"/uploads/examine/default/x?expires=9999999999&signature=bad", bytes.NewReader(form))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("status %d", resp.StatusCode)
		}
	})
}

// TestExaminePdfMissingEngine: without pdfinfo on PATH, examining a PDF
// is a 503 naming the missing program, never a 500 (issue 29, finding 9).
func TestExaminePdfMissingEngine(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := examineUpload(t, s, tok, "", quiretest.FormPDF("x", nil))
	t.Setenv("PATH", t.TempDir()) // no pdfinfo, no qpdf
	r := s.Do(http.MethodGet, "/objects/examine/"+id+"/pdf", nil, tok)
	servertest.MustStatus(t, r, http.StatusServiceUnavailable)
	if msg := quiretest.Str(t, r.JSON(t), "message"); !strings.Contains(msg, "pdfinfo") || !strings.Contains(msg, "poppler-utils") {
		t.Errorf("message %q does not name the missing engine", msg)
	}
}
