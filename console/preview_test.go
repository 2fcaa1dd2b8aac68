package console_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestConsole_Previews: a PDF opens in the browser's viewer from a
// same-origin signed URL (inline), an image shows, and other content
// offers the download only.
func TestConsole_Previews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.user(t, "pia", "default", "temporary-1", true)
	add := func(path, ctype string, content []byte) string {
		out := e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": path, "contentType": ctype, "isBase64": true,
			"content": base64.StdEncoding.EncodeToString(content)}, http.StatusCreated)
		id, _ := out["documentId"].(string)
		return id
	}
	pdf := add("p/lease.pdf", "application/pdf", quiretest.TextPDF("Lease of the warehouse"))
	png := add("p/scan.png", "image/png", quiretest.PNG(quiretest.TextImage("Scanned")))
	bin := add("p/data.bin", "application/octet-stream", []byte{0, 1, 2, 3})

	b := newBrowser(t, "en-US")
	var src string
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("pia", password)...)
	steps = append(steps,
		step{"a PDF in the browser's viewer", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/doc/" + pdf), textOf("#doc-title", "lease.pdf"),
			present("iframe#preview"), shot("pdf-preview"), attrOf("iframe#preview", "src", &src)}},
		step{"from a same-origin signed URL, inline", check(func() error {
			if !strings.HasPrefix(src, e.s.URL+"/downloads/") || !strings.Contains(src, "inline=true") {
				return fmt.Errorf("iframe src %q", src)
			}
			resp, err := http.Get(src)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !strings.HasPrefix(resp.Header.Get("Content-Disposition"), "inline") {
				return fmt.Errorf("preview URL: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"))
			}
			return nil
		})},
		step{"an image shows (allowed by the CSP)", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/doc/" + png), textOf("#doc-title", "scan.png"),
			wait(`(() => { const i = document.querySelector("img#preview"); return !!i && i.complete && i.naturalWidth > 0; })()`)}},
		step{"other content: no preview, a download", chromedp.Tasks{chromedp.Navigate(e.s.URL + "/console/#/doc/" + bin), textOf("#doc-title", "data.bin"),
			textOf("main", "No preview"), visible("#download")}},
	)
	b.run(steps...)
}
