package signatures_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestESignature_Routes walks the local provider's routes and envelope
// transitions on both sites, signing over plain HTTP: drafts, sending,
// reminders with each recipient's outcome, recipient views, routing
// order, voiding, declining, and provider events that never move a
// terminal envelope.
func TestESignature_Routes(t *testing.T) {
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	s, mail := servertest.EsignServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			pdf := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "sign/contract.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": servertest.B64(quiretest.TextPDF("Service agreement"))})
			txt := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "sign/note.txt", "content": "x"})
			base := "/esignature/local/" + pdf + "/envelopes"
			a, b := site.Name+"-a@example.com", site.Name+"-b@example.com"
			signers := []map[string]any{{"name": "Ann", "email": a, "recipientId": "1", "routingOrder": 1}, {"name": "Ben", "email": b, "recipientId": "2", "routingOrder": "2"}}
			for _, tt := range []struct {
				name, path string
				body       any
				want       int
				resp       string
			}{
				{"docusign is not reachable", "/esignature/docusign/" + pdf + "/envelopes", map[string]any{"signers": signers}, 400, "needs DocuSign's cloud service"},
				{"unknown provider", "/esignature/acme/" + pdf + "/envelopes", map[string]any{"signers": signers}, 400, "unknown e-signature provider"},
				{"no signers", base, map[string]any{}, 400, "'signers' is required"},
				{"signer without address", base, map[string]any{"signers": []map[string]any{{"name": "X"}}}, 400, "'email' is required"},
				{"bad environment", base, map[string]any{"environment": "STAGING", "signers": signers}, 400, "invalid 'environment'"},
				{"bad routing order", base, map[string]any{"signers": []map[string]any{{"name": "X", "email": "x@example.com", "routingOrder": 0}}}, 400, "'routingOrder' is 1 to 100"},
				{"in-person signers", base, map[string]any{"signers": signers, "inpersonSigners": []any{map[string]any{"hostName": "h"}}}, 400, "in-person signing"},
				{"not a PDF", "/esignature/local/" + txt + "/envelopes", map[string]any{"signers": signers}, 400, "signs PDF documents"},
			} {
				r := s.Do(http.MethodPost, tt.path+site.Query, tt.body, tok)
				if r.Status != tt.want || !strings.Contains(string(r.Body), tt.resp) {
					t.Errorf("%s: %d %s", tt.name, r.Status, r.Body)
				}
			}

			// A draft mails nothing until it is sent.
			r := s.Do(http.MethodPost, base+site.Query, map[string]any{"emailSubject": "Contract", "environment": "DEVELOPMENT", "status": "created", "signers": signers}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			env := quiretest.Str(t, r.JSON(t), "envelopeId")
			one := base + "/" + env
			if g := s.Do(http.MethodGet, one+site.Query, nil, tok); !strings.Contains(string(g.Body), `"status":"created"`) || len(servertest.LinksTo(mail, a)) != 0 {
				t.Fatalf("draft: %s, %d mails", g.Body, len(servertest.LinksTo(mail, a)))
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, one+"/send"+site.Query, map[string]any{}, tok), http.StatusOK)
			if l := servertest.LinksTo(mail, a); len(l) != 1 || len(servertest.LinksTo(mail, b)) != 0 {
				t.Fatalf("after send: %d links to the first signer, %d to the second (routing order)", len(l), len(servertest.LinksTo(mail, b)))
			}
			if r := s.Do(http.MethodPost, one+"/send"+site.Query, map[string]any{}, tok); r.Status != http.StatusConflict {
				t.Errorf("sending twice: %d %s", r.Status, r.Body)
			}
			// Reminders say what happened to each recipient.
			r = s.Do(http.MethodPost, one+"/reminders"+site.Query, map[string]any{"recipientIds": []string{"1", "2", "99"}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			body := string(r.Body)
			if !strings.Contains(body, `{"recipientId":"1","status":"sent"}`) || !strings.Contains(body, `"recipientId":"2","status":"skipped"`) ||
				!strings.Contains(body, `"recipientId":"99","status":"skipped"`) {
				t.Errorf("reminders: %s", body)
			}
			if l := servertest.LinksTo(mail, a); len(l) != 2 {
				t.Fatalf("links after the reminder: %v", l)
			}
			// A remote signer gets no recipient view (issue 29); the
			// reminder's link is one more live link; the signing page is served.
			r = s.Do(http.MethodPost, one+"/views/recipient"+site.Query, map[string]any{"environment": "DEVELOPMENT", "recipientView": map[string]any{"recipientId": "1", "returnUrl": "https://app.example.com/done"}}, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			view := servertest.LinksTo(mail, a)[1]
			page := s.Do(http.MethodGet, strings.TrimPrefix(view, s.URL), nil, "")
			if page.Status != http.StatusOK || !strings.Contains(string(page.Body), "Hello Ann") || !strings.Contains(string(page.Body), "DEVELOPMENT") {
				t.Fatalf("signing page: %d %s", page.Status, page.Body)
			}
			path := func(link string) string { return link[strings.Index(link, "/esign/"):] }
			view = path(view)
			r = s.Do(http.MethodPost, view, map[string]any{"action": "sign"}, "")
			if r.Status != http.StatusBadRequest {
				t.Errorf("a signature without a name or drawing: %d %s", r.Status, r.Body)
			}
			r = s.Do(http.MethodPost, path(servertest.LinksTo(mail, a)[0]), map[string]any{"action": "sign", "typedName": "Ann Example"}, "")
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `"status":"sent"`) {
				t.Fatalf("first signature: %d %s", r.Status, r.Body)
			}
			if r := s.Do(http.MethodPost, view, map[string]any{"action": "sign", "typedName": "Ann again"}, ""); r.Status != http.StatusNotFound {
				t.Errorf("a second signature with another of Ann's links: %d %s", r.Status, r.Body)
			}
			if l := servertest.LinksTo(mail, b); len(l) != 1 {
				t.Fatalf("the second signer was not mailed after the first signed: %v", l)
			}
			// Void needs a reason; a voided envelope takes nothing more.
			servertest.MustStatus(t, s.Do(http.MethodPost, one+"/void"+site.Query, map[string]any{}, tok), http.StatusBadRequest)
			servertest.MustStatus(t, s.Do(http.MethodPost, one+"/void"+site.Query, map[string]any{"voidedReason": "wrong version"}, tok), http.StatusOK)
			if r := s.Do(http.MethodPost, one+"/void"+site.Query, map[string]any{"voidedReason": "again"}, tok); r.Status != http.StatusConflict {
				t.Errorf("voiding twice: %d %s", r.Status, r.Body)
			}
			if r := s.Do(http.MethodPost, path(servertest.LinksTo(mail, b)[0]), map[string]any{"action": "sign", "typedName": "Ben"}, ""); r.Status != http.StatusNotFound {
				t.Errorf("signing a voided envelope: %d %s", r.Status, r.Body)
			}
			for _, ev := range []string{"envelope-completed", "recipient-completed", "envelope-declined"} {
				r := s.Do(http.MethodPost, "/esignature/local/events"+site.Query, map[string]any{"envelopeId": env, "event": ev}, tok)
				if r.Status != http.StatusOK {
					t.Errorf("event %s on a voided envelope: %d %s", ev, r.Status, r.Body)
				}
			}
			if g := s.Do(http.MethodGet, one+site.Query, nil, tok); !strings.Contains(string(g.Body), `"status":"voided"`) || !strings.Contains(string(g.Body), `"voidedReason":"wrong version"`) {
				t.Errorf("after events: %s", g.Body)
			}

			// Declining ends an envelope; later events do not revive it.
			r = s.Do(http.MethodPost, base+site.Query, map[string]any{"signers": []map[string]any{{"name": "Cy", "email": "cy-" + a}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			env2 := quiretest.Str(t, r.JSON(t), "envelopeId")
			servertest.MustStatus(t, s.Do(http.MethodPost, path(servertest.LinksTo(mail, "cy-"+a)[0]), map[string]any{"action": "decline", "reason": "no"}, ""), http.StatusOK)
			for _, ev := range []string{"envelope-completed", "envelope-voided", "recipient-completed"} {
				servertest.MustStatus(t, s.Do(http.MethodPost, "/esignature/local/events"+site.Query, map[string]any{"envelopeId": env2, "event": ev}, tok), http.StatusOK)
			}
			if g := s.Do(http.MethodGet, base+"/"+env2+site.Query, nil, tok); !strings.Contains(string(g.Body), `"status":"declined"`) {
				t.Errorf("declined envelope after events: %s", g.Body)
			}
			l := s.Do(http.MethodGet, base+site.Query, nil, tok)
			if n := len(quiretest.List(t, l.JSON(t), "envelopes")); n != 2 {
				t.Errorf("envelopes listed: %d %s", n, l.Body)
			}
			sv := s.Do(http.MethodPost, one+"/views/sender"+site.Query, map[string]any{}, tok)
			servertest.MustStatus(t, sv, http.StatusOK)
			if st := s.Do(http.MethodGet, strings.TrimPrefix(quiretest.Str(t, sv.JSON(t), "viewUrl"), s.URL), nil, ""); !strings.Contains(string(st.Body), `"status":"voided"`) {
				t.Errorf("sender view: %d %s", st.Status, st.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/esign/not-a-token", nil, ""), http.StatusNotFound)
		})
	}
}

// TestESignature_SigningInChromium sends a PDF to two signers in routing
// order and has each sign in a real headless Chromium from the link in
// their mail, one typing a name and one drawing; the envelope completes
// with a signed PDF artifact holding the document and a signature page.
func TestESignature_SigningInChromium(t *testing.T) {
	browser := quiretest.NeedProgram(t, "chromium", "chromium")
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	s, mail := servertest.EsignServer(t)
	tok := s.Admin()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU)...)
	defer cancelAlloc()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			pdf := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "sign/lease.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": servertest.B64(quiretest.TextPDF("Lease of the Springfield warehouse"))})
			a, b := "ann-"+site.Name+"@example.com", "ben-"+site.Name+"@example.com"
			r := s.Do(http.MethodPost, "/esignature/local/"+pdf+"/envelopes"+site.Query, map[string]any{"emailSubject": "Lease", "environment": "PRODUCTION",
				"signers": []map[string]any{{"name": "Ann Archer", "email": a, "routingOrder": 1}, {"name": "Ben Baker", "email": b, "routingOrder": 2}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			env := quiretest.Str(t, r.JSON(t), "envelopeId")
			sign := func(link string, steps ...chromedp.Action) {
				t.Helper()
				ctx, cancel := chromedp.NewContext(alloc)
				defer cancel()
				ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
				defer cancelT()
				var result string
				actions := append([]chromedp.Action{chromedp.Navigate(link), chromedp.WaitVisible("#sign", chromedp.ByID)}, steps...)
				actions = append(actions, chromedp.Click("#sign", chromedp.ByID),
					chromedp.Poll(`document.getElementById('result').textContent.indexOf('Signed') >= 0`, nil, chromedp.WithPollingTimeout(30*time.Second)),
					chromedp.Text("#result", &result, chromedp.ByID))
				if err := chromedp.Run(ctx, actions...); err != nil {
					t.Fatalf("signing in Chromium: %v", err)
				}
				if !strings.Contains(result, "Signed") {
					t.Fatalf("page says %q", result)
				}
			}
			links := servertest.LinksTo(mail, a)
			if len(links) != 1 {
				t.Fatalf("links to the first signer: %v", links)
			}
			sign(links[0], chromedp.SendKeys("#typed", "Ann Archer", chromedp.ByID))
			links = servertest.LinksTo(mail, b)
			if len(links) != 1 {
				t.Fatalf("links to the second signer: %v", links)
			}
			draw := `(function(){var p=document.getElementById('pad');var r=p.getBoundingClientRect();
				function ev(t,x,y){p.dispatchEvent(new PointerEvent(t,{clientX:r.left+x,clientY:r.top+y,bubbles:true}));}
				ev('pointerdown',20,100);for(var i=0;i<60;i++){ev('pointermove',20+i*6,100-Math.abs(30-i)*2);}
				window.dispatchEvent(new PointerEvent('pointerup'));return true;})()`
			var drew bool
			sign(links[0], chromedp.Evaluate(draw, &drew))

			g := s.Do(http.MethodGet, "/esignature/local/"+pdf+"/envelopes/"+env+site.Query, nil, tok)
			servertest.MustStatus(t, g, http.StatusOK)
			e := quiretest.Obj(t, g.JSON(t)["envelope"])
			if quiretest.Str(t, e, "status") != "completed" {
				t.Fatalf("envelope after both signed: %s", g.Body)
			}
			signed := servertest.FetchURLContent(t, s, tok, pdf, servertest.Query(site.Query, "artifactId="+quiretest.Str(t, e, "signedArtifactId")))
			text := strings.Join(strings.Fields(servertest.PdfText(t, signed)), " ")
			for _, want := range []string{"Lease of the Springfield warehouse", "Signatures", "Ann Archer", "Ben Baker", "Envelope " + env} {
				if !strings.Contains(text, want) {
					t.Errorf("signed PDF lacks %q: %q", want, text)
				}
			}
			if !bytes.Contains(signed, []byte("/Subtype /Image")) {
				t.Error("the drawn signature is not in the signed PDF")
			}
			if p := servertest.PdfPages(t, signed); p != "2" {
				t.Errorf("signed PDF pages %s, want 2 (the document and the signature page)", p)
			}
			al := s.Do(http.MethodGet, "/documents/"+pdf+"/artifacts"+site.Query, nil, tok)
			if !strings.Contains(string(al.Body), `"artifactCategory":"SIGNED"`) {
				t.Errorf("artifacts: %s", al.Body)
			}
		})
	}
}

// TestESignature_RecipientViewOnlyEmbeddedBySender: a recipient view is
// handed only for an embedded recipient (clientUserId, DocuSign's
// semantics) and only to the envelope's sender; another writer of the
// site gets none, and a remote signer signs only through their mailed link
// (issue 29, finding 4).
func TestESignature_RecipientViewOnlyEmbeddedBySender(t *testing.T) {
	s, _ := servertest.EsignServer(t)
	admin := s.Admin()
	alice, bob := s.Token("alice", "default"), s.Token("bob", "default")
	pdf := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "sign/c.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": servertest.B64(quiretest.TextPDF("Agreement"))})
	base := "/esignature/local/" + pdf + "/envelopes"
	r := s.Do(http.MethodPost, base, map[string]any{"signers": []map[string]any{
		{"name": "Ann", "email": "ann@example.com", "recipientId": "1"},
		{"name": "Eve", "clientUserId": "eve-1", "recipientId": "2"},
	}}, alice)
	servertest.MustStatus(t, r, http.StatusOK)
	view := base + "/" + quiretest.Str(t, r.JSON(t), "envelopeId") + "/views/recipient"
	rv := func(id, cu string) map[string]any {
		return map[string]any{"recipientView": map[string]any{"recipientId": id, "clientUserId": cu}}
	}
	for _, c := range []struct {
		name string
		tok  string
		body map[string]any
		want int
	}{
		{"another writer, remote signer", bob, rv("1", ""), 401},
		{"another writer, embedded signer", bob, rv("2", "eve-1"), 401},
		{"the sender, remote signer", alice, rv("1", ""), 400},
		{"the sender, wrong clientUserId", alice, rv("2", "mallory"), 400},
		{"the sender, embedded signer", alice, rv("2", "eve-1"), 200},
		{"an Admin, embedded signer", admin, rv("2", "eve-1"), 200},
	} {
		r := s.Do(http.MethodPost, view, c.body, c.tok)
		if r.Status != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
		}
		if c.want != 200 && strings.Contains(string(r.Body), "viewUrl") {
			t.Errorf("%s: a signing URL was handed out: %s", c.name, r.Body)
		}
	}
}

// TestESignature_BoundToSentContent: the signing page shows the exact
// bytes the envelope was sent with; once the document's content changes
// the page and its PDF refuse, and a signature voids the envelope instead
// of signing bytes nobody saw (issue 29, finding 3).
func TestESignature_BoundToSentContent(t *testing.T) {
	s, mail := servertest.EsignServer(t)
	tok := s.Admin()
	seen := quiretest.TextPDF("Price: 100 EUR")
	pdf := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "sign/offer.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(seen)})
	base := "/esignature/local/" + pdf + "/envelopes"
	r := s.Do(http.MethodPost, base, map[string]any{"signers": []map[string]any{{"name": "Ann", "email": "ann@example.com"}}}, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	one := base + "/" + quiretest.Str(t, r.JSON(t), "envelopeId")
	if g := s.Do(http.MethodGet, one, nil, tok); !strings.Contains(string(g.Body), `"contentSha256":"`) {
		t.Errorf("the envelope does not show the content it was sent with: %s", g.Body)
	}
	links := servertest.LinksTo(mail, "ann@example.com")
	if len(links) != 1 {
		t.Fatalf("links %v", links)
	}
	link := links[0][strings.Index(links[0], "/esign/"):]
	page := s.Do(http.MethodGet, link, nil, "")
	servertest.MustStatus(t, page, http.StatusOK)
	if !strings.Contains(string(page.Body), link+"/document") {
		t.Errorf("the signing page does not show the envelope's bytes: %s", page.Body)
	}
	doc := s.Do(http.MethodGet, link+"/document", nil, "")
	servertest.MustStatus(t, doc, http.StatusOK)
	if !bytes.Equal(doc.Body, seen) {
		t.Errorf("the signing page's PDF is %d bytes, not the %d sent", len(doc.Body), len(seen))
	}

	// The content changes after sending.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+pdf, map[string]any{"isBase64": true, "content": servertest.B64(quiretest.TextPDF("Price: 900 EUR")), "contentType": "application/pdf"}, tok), http.StatusOK)
	for _, p := range []string{link, link + "/document"} {
		if r := s.Do(http.MethodGet, p, nil, ""); r.Status != http.StatusConflict {
			t.Errorf("GET %s after the change: %d, want 409", p, r.Status)
		}
	}
	if r := s.Do(http.MethodPost, link, map[string]any{"action": "sign", "typedName": "Ann"}, ""); r.Status != http.StatusConflict {
		t.Errorf("signing after the change: %d %s, want 409", r.Status, r.Body)
	}
	g := s.Do(http.MethodGet, one, nil, tok)
	if e := quiretest.Obj(t, g.JSON(t)["envelope"]); quiretest.Str(t, e, "status") != "voided" || !strings.Contains(quiretest.Str(t, e, "voidedReason"), "changed") {
		t.Errorf("envelope after the change: %s", g.Body)
	}
}
