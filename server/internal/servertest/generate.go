package servertest

import (
	"bytes"
	"image"
	"image/jpeg"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"quire/quiretest"
)

// fetchContent downloads a document's (or artifact's) content through its
// url.
func FetchURLContent(t *testing.T, s *quiretest.Server, tok, doc, query string) []byte {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/url"+query, nil, tok)
	MustStatus(t, r, http.StatusOK)
	resp, err := http.Get(quiretest.Str(t, r.JSON(t), "url"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("download: %d %v", resp.StatusCode, err)
	}
	return b
}

func PdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command(quiretest.NeedProgram(t, "pdftotext", "poppler-utils"), "-", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

func PdfPages(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command(quiretest.NeedProgram(t, "pdfinfo", "poppler-utils"), "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, "Pages:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func JpegOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
