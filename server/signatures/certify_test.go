package signatures_test

import (
	"bytes"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/certify"
	"quire/node"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

func runPdfsig(t *testing.T, pdf []byte) string {
	t.Helper()
	prog := quiretest.NeedProgram(t, "pdfsig", "poppler-utils")
	fn := filepath.Join(t.TempDir(), "signed.pdf")
	if err := os.WriteFile(fn, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command(prog, fn).CombinedOutput()
	return string(out)
}

// TestCertification_SecretsAndSignatures: certificates go into a site's
// secrets store (never read back), a PDF is certified and approved with
// two of them into a CERTIFIED artifact that pdfsig and certify.Verify
// both find valid, bad inputs are 400s, and an envelope's signed copy is
// certified with the site's `esignature` certificate. Both sites.
func TestCertification_SecretsAndSignatures(t *testing.T) {
	qpdf := quiretest.NeedProgram(t, "qpdf", "qpdf")
	s, mail := servertest.EsignServer(t)
	tok := s.Admin()
	notary, approver := servertest.Pkcs12File(t, "Nora Notary", "pw1"), servertest.Pkcs12File(t, "Abe Approver", "pw2")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteID := strings.TrimPrefix(site.Query, "?siteId=")
			if siteID == "" {
				siteID = "default"
			}
			secrets := "/sites/" + siteID + "/secrets"
			r := s.Do(http.MethodPost, secrets, map[string]any{"alias": "notary", "type": "PKCS12", "data": servertest.B64(notary), "password": "pw1"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			if quiretest.Str(t, r.JSON(t), "fingerprint") == "" || !strings.Contains(quiretest.Str(t, r.JSON(t), "subject"), "Nora Notary") {
				t.Errorf("secret answer %s", r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, secrets, map[string]any{"alias": "approver", "data": servertest.B64(approver), "password": "pw2"}, tok), http.StatusCreated)
			for _, tt := range []struct {
				name string
				body map[string]any
				want int
			}{
				{"wrong password", map[string]any{"alias": "x", "data": servertest.B64(notary), "password": "nope"}, 400},
				{"not PKCS12", map[string]any{"alias": "x", "data": servertest.B64([]byte("hello")), "password": "pw1"}, 400},
				{"bad alias", map[string]any{"alias": "a b", "data": servertest.B64(notary), "password": "pw1"}, 400},
				{"taken alias", map[string]any{"alias": "notary", "data": servertest.B64(notary), "password": "pw1"}, 409},
			} {
				if r := s.Do(http.MethodPost, secrets, tt.body, tok); r.Status != tt.want {
					t.Errorf("%s: %d %s", tt.name, r.Status, r.Body)
				}
			}
			l := s.Do(http.MethodGet, secrets, nil, tok)
			servertest.MustStatus(t, l, http.StatusOK)
			if n := len(quiretest.List(t, l.JSON(t), "secrets")); n != 2 || strings.Contains(string(l.Body), "sealed") || strings.Contains(string(l.Body), "key") {
				t.Errorf("secrets listing: %s", l.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, secrets, nil, s.Token("w", siteID)), http.StatusUnauthorized)
			if m := s.Do(http.MethodGet, "/metrics", nil, ""); !strings.Contains(string(m.Body), `quire_certificate_expiry_timestamp_seconds{alias="notary",site="`+siteID+`"}`) {
				t.Errorf("no certificate expiry metric for %s", siteID)
			}

			// A classic PDF is signed as uploaded (its bytes are the signed
			// copy's first bytes); one with object streams as qpdf rewrote it.
			classic := quiretest.TextPDF("Deed of the Springfield plant")
			dir0 := t.TempDir()
			os.WriteFile(filepath.Join(dir0, "in.pdf"), classic, 0o600)
			if b, err := exec.Command(qpdf, "--object-streams=generate", filepath.Join(dir0, "in.pdf"), filepath.Join(dir0, "os.pdf")).CombinedOutput(); err != nil {
				t.Fatalf("qpdf: %v %s", err, b)
			}
			objStreams, _ := os.ReadFile(filepath.Join(dir0, "os.pdf"))
			var pdf string
			for _, src := range []struct {
				name    string
				content []byte
				asIs    bool
			}{{"classic", classic, true}, {"object streams", objStreams, false}} {
				id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "cert/deed-" + strings.ReplaceAll(src.name, " ", "-") + ".pdf", "contentType": "application/pdf", "isBase64": true,
					"content": servertest.B64(src.content)})
				if pdf == "" {
					pdf = id
				}
				r = s.Do(http.MethodPost, "/documents/"+id+"/certifications"+site.Query, map[string]any{"target": "DOWNLOAD",
					"certificates": []map[string]any{{"alias": "notary"}, {"alias": "approver", "sourceType": "QUIRE_SECRETS"}}}, tok)
				servertest.MustStatus(t, r, http.StatusCreated)
				resp, err := http.Get(quiretest.Str(t, r.JSON(t), "url"))
				if err != nil {
					t.Fatal(err)
				}
				signed, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("download: %d %v", resp.StatusCode, err)
				}
				if got := bytes.HasPrefix(signed, src.content); got != src.asIs {
					t.Errorf("%s: signed copy starts with the uploaded bytes: %v, want %v", src.name, got, src.asIs)
				}
				out := runPdfsig(t, signed)
				if strings.Count(out, "Signature is Valid") != 2 || !strings.Contains(out, "Nora Notary") || !strings.Contains(out, "Abe Approver") || !strings.Contains(out, "Total document signed") {
					t.Errorf("%s: pdfsig:\n%s", src.name, out)
				}
				if infos, err := certify.Verify(signed); err != nil || len(infos) != 2 || infos[0].Err != nil || infos[1].Err != nil || !infos[0].Certified {
					t.Errorf("%s: Verify: %v %+v", src.name, err, infos)
				}
				if al := s.Do(http.MethodGet, "/documents/"+id+"/artifacts"+site.Query, nil, tok); !strings.Contains(string(al.Body), `"artifactCategory":"CERTIFIED"`) {
					t.Errorf("%s: artifacts: %s", src.name, al.Body)
				}
			}

			txt := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "cert/note.txt", "content": "not a pdf"})
			broken := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "cert/broken.pdf", "contentType": "application/pdf", "content": "%PDF-1.4 nothing else"})
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "in.pdf"), quiretest.TextPDF("secret"), 0o600)
			if b, err := exec.Command(qpdf, "--encrypt", "u", "o", "256", "--", filepath.Join(dir, "in.pdf"), filepath.Join(dir, "enc.pdf")).CombinedOutput(); err != nil {
				t.Fatalf("qpdf --encrypt: %v %s", err, b)
			}
			encBytes, _ := os.ReadFile(filepath.Join(dir, "enc.pdf"))
			enc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "cert/enc.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(encBytes)})
			// A PDF another party already signed (approval) as it arrives by mail.
			if b, err := exec.Command(qpdf, "--object-streams=disable", filepath.Join(dir, "in.pdf"), filepath.Join(dir, "classic.pdf")).CombinedOutput(); err != nil {
				t.Fatalf("qpdf: %v %s", err, b)
			}
			classicBytes, _ := os.ReadFile(filepath.Join(dir, "classic.pdf"))
			other := quiretest.NewCertificate(t, "Other Party", time.Now().AddDate(1, 0, 0))
			signedBytes, err := certify.Sign(classicBytes, []certify.Signer{{Key: other.Key, Cert: other.Leaf, Chain: []*x509.Certificate{other.CA}}}, certify.Options{})
			if err != nil {
				t.Fatal(err)
			}
			presigned := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "cert/presigned.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(signedBytes)})
			cert := func(id string, body map[string]any) *quiretest.Response {
				return s.Do(http.MethodPost, "/documents/"+id+"/certifications"+site.Query, body, tok)
			}
			good := []map[string]any{{"alias": "notary"}}
			for _, tt := range []struct {
				name, id string
				body     map[string]any
				want     string
			}{
				{"AWS source", pdf, map[string]any{"target": "DOWNLOAD", "certificates": []map[string]any{{"alias": "notary", "sourceType": "AWS_SECRETS_MANAGER"}}}, "AWS Secrets Manager is not reachable"},
				{"unknown alias", pdf, map[string]any{"target": "DOWNLOAD", "certificates": []map[string]any{{"alias": "nobody"}}}, "certificate 'nobody' not found"},
				{"bad target", pdf, map[string]any{"target": "EMAIL", "certificates": good}, "invalid 'target'"},
				{"no certificates", pdf, map[string]any{"target": "DOWNLOAD"}, "1 to 5 certificates"},
				{"not a PDF", txt, map[string]any{"target": "DOWNLOAD", "certificates": good}, "not a PDF"},
				{"broken PDF", broken, map[string]any{"target": "DOWNLOAD", "certificates": good}, "not a PDF"},
				{"encrypted PDF", enc, map[string]any{"target": "DOWNLOAD", "certificates": good}, "the PDF is encrypted"},
				{"already signed", presigned, map[string]any{"target": "DOWNLOAD", "certificates": good}, "a certification must be its first signature"},
			} {
				r := cert(tt.id, tt.body)
				if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) || !strings.Contains(string(r.Body), `"errors"`) {
					t.Errorf("%s: %d %s, want 400 with %q", tt.name, r.Status, r.Body, tt.want)
				}
			}
			servertest.MustStatus(t, s.Do(http.MethodDelete, secrets+"/approver", nil, tok), http.StatusOK)
			if r := cert(pdf, map[string]any{"target": "DOWNLOAD", "certificates": []map[string]any{{"alias": "approver"}}}); r.Status != http.StatusBadRequest {
				t.Errorf("a deleted certificate: %d %s", r.Status, r.Body)
			}

			// An envelope's signed copy is certified with the site's `esignature` certificate.
			servertest.MustStatus(t, s.Do(http.MethodPost, secrets, map[string]any{"alias": "esignature", "data": servertest.B64(notary), "password": "pw1"}, tok), http.StatusCreated)
			signer := "cert-" + site.Name + "@example.com"
			r = s.Do(http.MethodPost, "/esignature/local/"+pdf+"/envelopes"+site.Query, map[string]any{"signers": []map[string]any{{"name": "Sam Signer", "email": signer}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			env := quiretest.Str(t, r.JSON(t), "envelopeId")
			links := servertest.LinksTo(mail, signer)
			if len(links) != 1 {
				t.Fatalf("links: %v", links)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, links[0][strings.Index(links[0], "/esign/"):], map[string]any{"action": "sign", "typedName": "Sam Signer"}, ""), http.StatusOK)
			g := s.Do(http.MethodGet, "/esignature/local/"+pdf+"/envelopes/"+env+site.Query, nil, tok)
			e := quiretest.Obj(t, g.JSON(t)["envelope"])
			if quiretest.Str(t, e, "status") != "completed" {
				t.Fatalf("envelope: %s", g.Body)
			}
			copyPDF := servertest.FetchURLContent(t, s, tok, pdf, servertest.Query(site.Query, "artifactId="+quiretest.Str(t, e, "signedArtifactId")))
			if out := runPdfsig(t, copyPDF); !strings.Contains(out, "Signature is Valid") || !strings.Contains(out, "Nora Notary") {
				t.Errorf("pdfsig of the envelope's signed copy:\n%s", out)
			}
		})
	}
}

// TestCertification_Timestamped: with certify.tsa_url every signature of
// a certification carries a token of the TSA (OpenSSL's) that verifies;
// when the authority cannot be reached the request is a 502 with the
// FormKiQ message shape and no artifact is stored. Both sites.
func TestCertification_Timestamped(t *testing.T) {
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	tsa := quiretest.NewTSA(t)
	live := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.TSA = node.TSAConfig{URL: tsa.URL, CAFile: filepath.Join(tsa.Dir, "ca.pem")}
	})
	dead := quiretest.NewServer(t, func(c *quiretest.Config) { c.TSA = node.TSAConfig{URL: "http://127.0.0.1:1/tsa"} })
	notary := servertest.Pkcs12File(t, "Nora Notary", "pw1")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteID := strings.TrimPrefix(site.Query, "?siteId=")
			if siteID == "" {
				siteID = "default"
			}
			for _, tc := range []struct {
				name      string
				s         *quiretest.Server
				want      int
				artifacts int
			}{
				{"TSA reachable", live, http.StatusCreated, 1},
				{"TSA down", dead, http.StatusBadGateway, 0},
			} {
				t.Run(tc.name, func(t *testing.T) {
					tok := tc.s.Admin()
					servertest.MustStatus(t, tc.s.Do(http.MethodPost, "/sites/"+siteID+"/secrets", map[string]any{"alias": "notary", "data": servertest.B64(notary), "password": "pw1"}, tok), http.StatusCreated)
					pdf := servertest.AddDoc(t, tc.s, tok, site.Query, map[string]any{"path": "cert/deed.pdf", "contentType": "application/pdf", "isBase64": true,
						"content": servertest.B64(quiretest.TextPDF("Deed"))})
					r := tc.s.Do(http.MethodPost, "/documents/"+pdf+"/certifications"+site.Query, map[string]any{"target": "DOWNLOAD",
						"certificates": []map[string]any{{"alias": "notary"}}}, tok)
					if r.Status != tc.want {
						t.Fatalf("certify: %d %s", r.Status, r.Body)
					}
					if n := len(quiretest.List(t, tc.s.Do(http.MethodGet, "/documents/"+pdf+"/artifacts"+site.Query, nil, tok).JSON(t), "documents")); n != tc.artifacts {
						t.Errorf("%d artifacts, want %d", n, tc.artifacts)
					}
					if tc.want != http.StatusCreated {
						if !strings.Contains(quiretest.Str(t, r.JSON(t), "message"), "timestamp authority") {
							t.Errorf("message: %s", r.Body)
						}
						return
					}
					resp, err := http.Get(quiretest.Str(t, r.JSON(t), "url"))
					if err != nil {
						t.Fatal(err)
					}
					signed, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						t.Fatal(err)
					}
					infos, err := certify.Verify(signed)
					if err != nil || len(infos) != 1 || infos[0].Err != nil || !infos[0].Timestamped || time.Since(infos[0].Timestamp) > time.Minute {
						t.Errorf("Verify: %v %+v", err, infos)
					}
				})
			}
		})
	}
}

// TestCertification_WhoMayUseSiteCertificates: a site's certificate signs
// for the whole site, so only governors, Admins and the groups of the
// secret's allowedGroups may use it; any other writer is refused and
// nothing is written (issue 29, finding 7).
func TestCertification_WhoMayUseSiteCertificates(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	bob, carol := s.Token("bob", "default"), s.Token("carol", "default", "signers")
	secrets := "/sites/default/secrets"
	servertest.MustStatus(t, s.Do(http.MethodPost, secrets, map[string]any{"alias": "notary", "data": servertest.B64(servertest.Pkcs12File(t, "Nora Notary", "pw")), "password": "pw"}, admin), http.StatusCreated)
	r := s.Do(http.MethodPost, secrets, map[string]any{"alias": "team", "data": servertest.B64(servertest.Pkcs12File(t, "Team Seal", "pw")), "password": "pw", "allowedGroups": []string{"signers"}}, admin)
	servertest.MustStatus(t, r, http.StatusCreated)
	if g, _ := r.JSON(t)["allowedGroups"].([]any); len(g) != 1 || g[0] != "signers" {
		t.Errorf("allowedGroups %v", g)
	}
	if r := s.Do(http.MethodPost, secrets, map[string]any{"alias": "bad", "data": servertest.B64(servertest.Pkcs12File(t, "X", "pw")), "password": "pw", "allowedGroups": []string{""}}, admin); r.Status != http.StatusBadRequest {
		t.Errorf("an empty group name: %d", r.Status)
	}
	doc := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "c/a.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(quiretest.TextPDF("Deed"))})
	certify := func(tok, alias string) *quiretest.Response {
		return s.Do(http.MethodPost, "/documents/"+doc+"/certifications", map[string]any{"target": "DOWNLOAD", "certificates": []map[string]any{{"alias": alias}}}, tok)
	}
	for _, c := range []struct {
		name, tok, alias string
		allowed          bool
	}{
		{"a writer, a certificate without allowedGroups", bob, "notary", false},
		{"a writer outside allowedGroups", bob, "team", false},
		{"a member of allowedGroups, another certificate", carol, "notary", false},
		{"a member of allowedGroups", carol, "team", true},
		{"an Admin", admin, "notary", true},
	} {
		r := certify(c.tok, c.alias)
		if got := r.Status != http.StatusUnauthorized; got != c.allowed {
			t.Errorf("%s: %d %s, allowed %v", c.name, r.Status, r.Body, c.allowed)
		}
	}
	a := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts", nil, admin)
	servertest.MustStatus(t, a, http.StatusOK)
	for _, x := range quiretest.List(t, a.JSON(t), "documents") {
		if u, _ := quiretest.Obj(t, x)["userId"].(string); u == "bob" {
			t.Errorf("a refused certification wrote an artifact: %v", x)
		}
	}
}
