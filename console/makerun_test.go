package console_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// TestMakeRun_ScannedLettersFound is issue 46's journey on the README's
// own setup: a server started exactly as `make run` starts it (bin/quire
// serve with a relative --data-dir ./data and the default configuration,
// nothing changed after), a new user made by an administrator as the
// README says (bin/quire user add, a temporary password), who signs in
// for the first time in Chromium, chooses a password, drops two scanned
// letters on the console — image-only PDFs, one laid sideways on the
// glass (turned 90°), one in German — and finds each by a word printed on
// it through the console's search: the German one by its words with
// umlauts and ß, typed with them or without. No setting is changed and no
// action asked: the server's default processing (OCR in its default
// languages, then FULLTEXT) reads them.
func TestMakeRun_ScannedLettersFound(t *testing.T) {
	t.Parallel()
	ocrEngines(t)
	dir, listen := quiretest.MakeRun(t, quiretest.QuireCommand(t))
	base := "http://" + listen
	// The administrator, in a second terminal (README, "Users and sign-in").
	quiretest.RunCommand(t, dir, "bin/quire user add lena --groups default --password 'Temporary-pass-1' --url "+base+" --data-dir ./data", 2*time.Minute)
	admin := quiretest.RunCommand(t, dir, "bin/quire token --data-dir ./data --user admin --groups Admins", 2*time.Minute)
	// Only to wait for the pipeline and to find the documents' ids: the
	// administrator's token reads, it changes nothing.
	e := &env{s: &quiretest.Server{URL: base, Client: &http.Client{Timeout: 30 * time.Second}}, admin: admin}

	sideways := scanPDF(t, turned90(quiretest.TextImage("Dear Mr Becker,", "your Quokkabilly invoice is enclosed.", "Kind regards, Harbour Supplies")))
	german := scanPDF(t, quiretest.TextImage("Sehr geehrte Frau Müller,", "anbei unsere Rechnung für die Gartenstraße.",
		"Bitte überweisen Sie den Betrag bis Freitag.", "Mit freundlichen Grüßen", "Jörg Weißhaupt"))

	b := newBrowser(t, "de-DE")
	b.run(
		step{"open the server's address", navigate(base + "/")},
		step{"the sign-in page", visible("#login")},
		step{"type the temporary password", chromedp.Tasks{setValue("#username", "lena"), setValue("#password", "Temporary-pass-1")}},
		step{"sign in", click("#login button[type=submit]")},
		step{"asked for a new password", visible("#newpw")},
		step{"choose a password", chromedp.Tasks{setValue("#newpassword", password), setValue("#newpassword2", password), click("#newpw button[type=submit]")}},
		step{"signed in", textOf("#user", "lena")},
		step{"drop the two letters", chromedp.Tasks{navigate(base + "/console/#/browse"),
			dropOn(droppedFile{"sideways-letter.pdf", "application/pdf", sideways}, droppedFile{"brief-mueller.pdf", "application/pdf", german})}},
		step{"both are uploaded", wait(`document.querySelectorAll("#uploads li.ok").length === 2`)},
		step{"the server reads the sideways letter by itself (asked of the API)", e.processedByDefault(t, "sideways-letter.pdf")},
		step{"and the German one", e.processedByDefault(t, "brief-mueller.pdf")},
	)
	for _, c := range []struct{ query, want string }{
		{"quokkabilly", "sideways-letter.pdf"}, // a word of the page laid sideways
		{"Harbour", "sideways-letter.pdf"},     // another
		{"Gartenstraße", "brief-mueller.pdf"},  // with ß, as printed
		{"Gartenstrasse", "brief-mueller.pdf"}, // typed without ß
		{"Müller", "brief-mueller.pdf"},        // with an umlaut
		{"Grüße", "brief-mueller.pdf"},         // a part of Grüßen
		{"überweisen", "brief-mueller.pdf"},    // an umlaut first
		{"Rechnung", "brief-mueller.pdf"},      // no umlaut at all
	} {
		b.run(step{"search " + c.query, chromedp.Tasks{navigate(base + "/console/#/search"), visible("#q"),
			setValue("#q", c.query), searchUntil(c.want)}})
	}
}
