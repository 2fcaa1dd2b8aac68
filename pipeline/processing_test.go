package pipeline_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/pipeline"
	"quire/quiretest"
	"quire/storage"
)

// TestCheckProcessing: the site configuration's processing section is
// refused with a message per problem, and accepted when tesseract has the
// languages and the default actions can run without parameters.
func TestCheckProcessing(t *testing.T) {
	quiretest.NeedProgram(t, "tesseract", "tesseract-ocr")
	s := quiretest.NewServer(t)
	acts := func(a ...string) *[]string { return &a }
	for _, tc := range []struct {
		name string
		in   *storage.ProcessingConfig
		want []string // messages, in order
	}{
		{"none", nil, nil},
		{"German and English, the default actions", &storage.ProcessingConfig{Languages: []string{"deu", "eng"}, DefaultActions: acts("OCR", "FULLTEXT", "CHECKSUM")}, nil},
		{"no default actions", &storage.ProcessingConfig{DefaultActions: acts()}, nil},
		{"not installed", &storage.ProcessingConfig{Languages: []string{"eng", "xyz"}}, []string{"language 'xyz' is not installed: install the Debian package tesseract-ocr-xyz"}},
		{"not a code", &storage.ProcessingConfig{Languages: []string{"German", "osd"}}, []string{
			"invalid language 'German': a tesseract language code such as eng, deu or fra", "invalid language 'osd': a tesseract language code such as eng, deu or fra"}},
		{"twice", &storage.ProcessingConfig{Languages: []string{"eng", "eng"}, DefaultActions: acts("OCR", "OCR")}, []string{
			"language 'eng' is listed twice", "'OCR' is listed twice"}},
		{"an action that needs parameters", &storage.ProcessingConfig{DefaultActions: acts("WEBHOOK")}, []string{
			"'WEBHOOK' cannot be a default action: one of OCR, FULLTEXT, CHECKSUM, ANTIVIRUS, MALWARE_SCAN"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, it := range s.Node.Pipeline.CheckProcessing(context.Background(), tc.in) {
				got = append(got, it.Msg)
				if !strings.HasPrefix(it.Key, "processing.") {
					t.Errorf("key %q", it.Key)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		c    *storage.SiteConfig
		want []string
	}{
		{"no configuration", &storage.SiteConfig{}, []string{"OCR", "FULLTEXT"}},
		{"languages only", &storage.SiteConfig{Processing: &storage.ProcessingConfig{Languages: []string{"deu"}}}, []string{"OCR", "FULLTEXT"}},
		{"none", &storage.SiteConfig{Processing: &storage.ProcessingConfig{DefaultActions: acts()}}, []string{}},
		{"chosen", &storage.SiteConfig{Processing: &storage.ProcessingConfig{DefaultActions: acts("ANTIVIRUS", "OCR")}}, []string{"ANTIVIRUS", "OCR"}},
	} {
		t.Run("DefaultActions "+tc.name, func(t *testing.T) {
			got := []string{}
			for _, a := range pipeline.DefaultActions(tc.c, "joe") {
				if a.Status != storage.ActionPending || a.UserID != "joe" {
					t.Fatalf("action %+v", a)
				}
				// A default FULLTEXT keeps the whole text, not FormKiQ's
				// 2,048 characters: a scan's later pages are found.
				if a.Type == "FULLTEXT" && string(a.Parameters) != `{"characterMax":"-1"}` {
					t.Fatalf("default FULLTEXT parameters %s, want characterMax -1", a.Parameters)
				}
				got = append(got, a.Type)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDefaultProcessing_ScannedLetterFound: a German site's default
// actions, as a door would add them to a document whose request names
// none, make a scanned letter (an image-only PDF turned sideways) findable
// by a word printed on it, without its umlaut, and name the page it is on.
func TestDefaultProcessing_ScannedLetterFound(t *testing.T) {
	s := ocrServer(t)
	tok := s.Admin()
	setProcessing(t, s, "default", &storage.ProcessingConfig{Languages: []string{"deu"}})
	c, err := s.Node.DB.SiteConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	var actions []map[string]any
	for _, a := range pipeline.DefaultActions(c, "admin") {
		actions = append(actions, map[string]any{"type": a.Type})
	}
	cover := quiretest.ImagePDF(quiretest.TextImage("Anschreiben"))
	letter := quiretest.ImagePDF(rotate90(quiretest.TextImage("Sehr geehrte Frau Schröder,", "Ihre Zebracorn Bestellung")))
	r := s.Do(http.MethodPost, "/documents", map[string]any{"path": "post/brief.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(joinPDFs(t, cover, letter)), "actions": actions}, tok)
	if r.Status != http.StatusCreated {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	id := quiretest.Str(t, r.JSON(t), "documentId")
	waitComplete(t, s, tok, id)
	deadline := time.Now().Add(time.Minute)
	for _, q := range []string{"Schroeder", "zebracor", "Bestellungen"} {
		for {
			sr := s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": q}}, tok)
			if strings.Contains(string(sr.Body), id) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q does not find the letter: %s", q, sr.Body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if p := s.Node.Indexer.MatchedPages("default", id, q); !slices.Equal(p, []int{2}) {
			t.Errorf("%q matched pages %v, want [2]", q, p)
		}
	}
}
