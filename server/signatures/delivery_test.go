package signatures_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestESignature_DeliveryFailed (issue 47): on a server that cannot mail,
// the envelope's answer says per signer that the link was not sent, the
// envelope keeps it, and the sender (only) gets the signer's link through
// views/recipient, which opens the signing page. Where mail works the
// answer says sent and a remote signer still gets no recipient view.
func TestESignature_DeliveryFailed(t *testing.T) {
	s := quiretest.NewServer(t) // no mail server
	alice, bob := s.Token("alice", "default"), s.Token("bob", "default")
	pdf := servertest.AddDoc(t, s, s.Admin(), "", map[string]any{"path": "sign/c.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": servertest.B64(quiretest.TextPDF("Agreement"))})
	base := "/esignature/local/" + pdf + "/envelopes"
	r := s.Do(http.MethodPost, base, map[string]any{"signers": []map[string]any{
		{"name": "Anna", "email": "anna@example.com", "recipientId": "1"},
		{"name": "Eve", "clientUserId": "eve-1", "recipientId": "2"},
		{"name": "Ben", "email": "ben@example.com", "recipientId": "3", "routingOrder": 2},
	}}, alice)
	servertest.MustStatus(t, r, http.StatusOK)
	b := r.JSON(t)
	env := quiretest.Str(t, b, "envelopeId")
	if n := len(quiretest.List(t, b, "signers")); n != 2 {
		t.Fatalf("signers in the answer: %d, want the two whose turn it is: %s", n, r.Body)
	}
	anna, eve := quiretest.Item(t, b, "signers", 0), quiretest.Item(t, b, "signers", 1)
	if quiretest.Str(t, anna, "recipientId") != "1" || quiretest.Str(t, anna, "delivery") != "failed" || quiretest.Str(t, anna, "message") == "" {
		t.Fatalf("anna: %v", anna)
	}
	if quiretest.Str(t, eve, "delivery") != "skipped" {
		t.Fatalf("eve (embedded): %v", eve)
	}
	g := s.Do(http.MethodGet, base+"/"+env, nil, alice)
	if !strings.Contains(string(g.Body), `"delivery":"failed"`) {
		t.Fatalf("the envelope does not keep the failed delivery: %s", g.Body)
	}
	view := base + "/" + env + "/views/recipient"
	rv := map[string]any{"recipientView": map[string]any{"recipientId": "1"}}
	if r := s.Do(http.MethodPost, view, rv, bob); r.Status != http.StatusUnauthorized || strings.Contains(string(r.Body), "viewUrl") {
		t.Fatalf("another writer: %d %s", r.Status, r.Body)
	}
	if r := s.Do(http.MethodPost, view, map[string]any{"recipientView": map[string]any{"recipientId": "3"}}, alice); r.Status != http.StatusBadRequest {
		t.Fatalf("a signer not yet mailed (routing order 2): %d %s", r.Status, r.Body)
	}
	r = s.Do(http.MethodPost, view, rv, alice)
	servertest.MustStatus(t, r, http.StatusOK)
	u := quiretest.Str(t, r.JSON(t), "viewUrl")
	if !strings.Contains(u, "/esign/") {
		t.Fatalf("viewUrl %s", u)
	}
	p := s.Do(http.MethodGet, u[strings.Index(u, "/esign/"):], nil, "")
	if p.Status != http.StatusOK || !strings.Contains(string(p.Body), "Anna") {
		t.Fatalf("signing page: %d %.300s", p.Status, p.Body)
	}

	// With mail: sent, and a remote signer has no recipient view.
	m, _ := servertest.EsignServer(t)
	pdf = servertest.AddDoc(t, m, m.Admin(), "", map[string]any{"path": "sign/d.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": servertest.B64(quiretest.TextPDF("Agreement"))})
	base = "/esignature/local/" + pdf + "/envelopes"
	r = m.Do(http.MethodPost, base, map[string]any{"signers": []map[string]any{{"name": "Anna", "email": "anna@example.com"}}}, m.Admin())
	servertest.MustStatus(t, r, http.StatusOK)
	b = r.JSON(t)
	if d := quiretest.Str(t, quiretest.Item(t, b, "signers", 0), "delivery"); d != "sent" {
		t.Fatalf("delivery with mail: %s", r.Body)
	}
	r = m.Do(http.MethodPost, base+"/"+quiretest.Str(t, b, "envelopeId")+"/views/recipient", rv, m.Admin())
	if r.Status != http.StatusBadRequest {
		t.Fatalf("a mailed remote signer's view: %d %s", r.Status, r.Body)
	}
}
