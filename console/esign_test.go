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

// TestConsole_ESignNotSent (issue 47's walk): on a server that cannot
// mail, sending a PDF for signature says it was NOT sent (never "Sent for
// signature to anna@…"), the signer shows as not sent, and the sender
// gets the signing link to hand over, which opens the signing page.
func TestConsole_ESignNotSent(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t) // no mail server
	e.user(t, "sara", "default", "temporary-1", true)
	pdf := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "sign/offer.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Offer"))}, http.StatusCreated), "documentId")
	var link string
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("sara", password)...)
	steps = append(steps,
		step{"send the PDF for signature", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + pdf), textOf("#esign", "Not sent for signature"),
			setValue("#sign-name", "Anna Berg"), setValue("#sign-email", "anna@example.com"), click("#esign-form button[type=submit]")}},
		step{"it says it was not sent", chromedp.Tasks{textOf("#status", "Not sent: the mail to anna@example.com could not be delivered"),
			wait(`!document.getElementById("status").textContent.includes("Sent for signature")`),
			textOf(`#envelopes li[data-delivery="failed"]`, "not sent: the mail could not be delivered")}},
		step{"the signing link to hand over", chromedp.Tasks{click("#envelopes button.get-link"), wait(`/\/esign\/[^/]+$/.test(document.querySelector("#envelopes input.sign-link").value)`),
			textOf("#envelopes .signlink label", "Signing link for Anna Berg"), valueOf("#envelopes input.sign-link", &link),
			axeAll(src, "e-signature not sent"), shot("esignature-not-sent"), phoneShot(src, "esignature-not-sent")}},
		step{"the link opens the signing page", chromedp.Tasks{check(func() error {
			if !strings.HasPrefix(link, e.s.URL+"/esign/") {
				return fmt.Errorf("link %q", link)
			}
			return nil
		})}},
	)
	b.run(steps...)
	b.run(step{"the signing page", chromedp.Tasks{navigate(link), visible("#sign")}})
	envs := e.must(t, "GET", "/esignature/local/"+pdf+"/envelopes?siteId=default", nil, http.StatusOK)
	if s := fmt.Sprint(envs); !strings.Contains(s, "delivery:failed") {
		t.Fatalf("envelopes: %s", s)
	}
}
