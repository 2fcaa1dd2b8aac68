package server_test

import (
	"encoding/base64"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server"
	"quire/server/internal/servertest"
)

// Stored bytes never run on Quire's origin (issue 43, finding 1): a
// writer's HTML page served by any route as text/html, without
// Content-Disposition, nosniff and a sandbox, would read an Admin's
// console session. The tests are generated from the route table:
// TestStoredBytes_RoutesClassified holds server.StoredRoutes to the
// exercisers below, TestStoredBytes_SafeHeaders runs every exerciser
// (each route that serves stored bytes, as GET and HEAD) and
// TestStoredBytes_NoOtherRoute walks every other GET route with the page
// as its document: an answer that carries the page's bytes as anything
// but JSON fails.

// storedMarker is the script of the stored page.
const storedMarker = `<script>fetch('/login/refresh',{method:'POST'})/*quire-stored-43*/</script>`

// storedFixture is a server holding the page (HTML), an SVG and a PDF
// in envelope, plus what the exercisers need.
type storedFixture struct {
	s                   *quiretest.Server
	admin, key          string
	html, svg, pdf, xml string
	signLink            string
}

// storedExercisers reach each stored-bytes route with valid credentials:
// each returns the URLs (absolute or server paths) to GET and HEAD, the
// document's expected type, whether it is active (must be an
// attachment) and the Authorization/Basic header to send.
type storedRequest struct {
	what   string
	url    string
	basic  string // WebDAV's apikey password
	token  string
	active bool
}

var storedExercisers = map[string]func(t *testing.T, f *storedFixture) []storedRequest{
	"GET /downloads/:siteId/:documentId": func(t *testing.T, f *storedFixture) []storedRequest {
		var out []storedRequest
		for _, c := range []struct{ what, doc, query string }{
			{"html inline", f.html, "?inline=true"},
			{"html", f.html, ""},
			{"svg inline", f.svg, "?inline=true"},
			{"xml inline", f.xml, "?inline=true"},
			{"earlier version inline", f.html, "?inline=true&versionKey=" + f.versionKey(t, f.html)},
			{"artifact inline", f.html, "?inline=true&artifactId=" + f.artifact(t)},
		} {
			r := f.s.Do(http.MethodGet, "/documents/"+c.doc+"/url"+c.query, nil, f.admin)
			servertest.MustStatus(t, r, http.StatusOK)
			out = append(out, storedRequest{what: c.what, url: quiretest.Str(t, r.JSON(t), "url"), active: true})
		}
		return out
	},
	"GET /published/:siteId/:documentId": func(t *testing.T, f *storedFixture) []storedRequest {
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest(http.MethodGet, f.s.URL+"/publications/"+f.html, nil)
		req.Header.Set("Authorization", f.admin)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusTemporaryRedirect {
			t.Fatalf("publication: %d", resp.StatusCode)
		}
		return []storedRequest{{what: "published page", url: resp.Header.Get("Location"), active: true}}
	},
	"GET /archives/:siteId/:archiveId": func(t *testing.T, f *storedFixture) []storedRequest {
		r := f.s.Do(http.MethodPost, "/documents/compress", map[string]any{"documentIds": []string{f.html}}, f.admin)
		servertest.MustStatus(t, r, http.StatusCreated)
		return []storedRequest{{what: "archive", url: quiretest.Str(t, r.JSON(t), "downloadUrl")}}
	},
	"GET /esign/:token/document": func(t *testing.T, f *storedFixture) []storedRequest {
		return []storedRequest{{what: "signing PDF", url: f.signLink + "/document"}}
	},
	"GET /dav/*": func(t *testing.T, f *storedFixture) []storedRequest {
		return []storedRequest{
			{what: "html page", url: "/dav/default/pages/page.html", basic: f.key, active: true},
			{what: "svg", url: "/dav/default/pages/logo.svg", basic: f.key, active: true},
		}
	},
	"GET /branding/logo": func(t *testing.T, f *storedFixture) []storedRequest {
		r := f.s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": map[string]any{"logo": svgLogo}}, f.admin)
		servertest.MustStatus(t, r, http.StatusOK)
		c := f.s.Do(http.MethodGet, "/system/configuration", nil, f.admin)
		return []storedRequest{{what: "svg logo", url: quiretest.Str(t, quiretest.Obj(t, c.JSON(t)["branding"]), "logoUrl"), active: true}}
	},
	"GET /sites/:siteId/branding/logo": func(t *testing.T, f *storedFixture) []storedRequest {
		r := f.s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"branding": map[string]any{"logo": svgLogo}}, f.admin)
		servertest.MustStatus(t, r, http.StatusOK)
		c := f.s.Do(http.MethodGet, "/sites/default/configuration", nil, f.admin)
		return []storedRequest{{what: "site svg logo", url: quiretest.Str(t, quiretest.Obj(t, c.JSON(t)["branding"]), "logoUrl"), active: true}}
	},
	"GET /system/backup": func(t *testing.T, f *storedFixture) []storedRequest {
		return []storedRequest{{what: "backup", url: "/system/backup", token: f.admin}}
	},
}

// svgLogo is a branding logo that would run script if served as itself.
var svgLogo = "data:image/svg+xml," + url.PathEscape(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>`+storedMarker+`</svg>`)

func (f *storedFixture) versionKey(t *testing.T, doc string) string {
	t.Helper()
	vs := f.s.Do(http.MethodGet, "/documents/"+doc+"/versions", nil, f.admin)
	servertest.MustStatus(t, vs, http.StatusOK)
	l := quiretest.List(t, vs.JSON(t), "documents")
	if len(l) < 2 {
		t.Fatalf("no earlier version: %s", vs.Body)
	}
	return quiretest.Str(t, quiretest.Obj(t, l[1]), "versionKey")
}

func (f *storedFixture) artifact(t *testing.T) string {
	t.Helper()
	r := f.s.Do(http.MethodPost, "/documents", map[string]any{"artifacts": true, "documentId": f.html,
		"content": "<html>" + storedMarker + "</html>", "contentType": "text/html"}, f.admin)
	servertest.MustStatus(t, r, http.StatusCreated)
	return quiretest.Str(t, r.JSON(t), "artifactId")
}

func newStoredFixture(t *testing.T) *storedFixture {
	t.Helper()
	s, mail := servertest.EsignServer(t)
	f := &storedFixture{s: s, admin: s.Admin()}
	page := "<!DOCTYPE html><html><body>" + storedMarker + "</body></html>"
	// The page has an earlier version (its first content) and is
	// published (PUBLISH action).
	f.html = servertest.AddDoc(t, s, f.admin, "", map[string]any{"path": "pages/page.html", "contentType": "text/html", "content": "<html>" + storedMarker + "</html>"})
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+f.html, map[string]any{"content": page, "contentType": "text/html"}, f.admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+f.html+"/actions", map[string]any{"actions": []map[string]any{{"type": "PUBLISH"}}}, f.admin), http.StatusOK)
	quiretest.Eventually(t, "the page is published", 30*time.Second, func() bool {
		return s.Do(http.MethodGet, "/publications/"+f.html, nil, f.admin).Status == http.StatusOK
	})
	f.svg = servertest.AddDoc(t, s, f.admin, "", map[string]any{"path": "pages/logo.svg", "contentType": "image/svg+xml",
		"content": `<svg xmlns="http://www.w3.org/2000/svg">` + storedMarker + `</svg>`})
	f.xml = servertest.AddDoc(t, s, f.admin, "", map[string]any{"path": "pages/feed.xml", "contentType": "application/xml",
		"content": `<x:script xmlns:x="http://www.w3.org/1999/xhtml">` + storedMarker + `</x:script>`})
	f.pdf = servertest.AddDoc(t, s, f.admin, "", map[string]any{"path": "sign/offer.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": servertest.B64(quiretest.TextPDF("Offer"))})
	r := s.Do(http.MethodPost, "/esignature/local/"+f.pdf+"/envelopes", map[string]any{"signers": []map[string]any{{"name": "Ann", "email": "ann@example.com"}}}, f.admin)
	servertest.MustStatus(t, r, http.StatusOK)
	quiretest.Eventually(t, "the signing mail", 30*time.Second, func() bool { return len(servertest.LinksTo(mail, "ann@example.com")) > 0 })
	l := servertest.LinksTo(mail, "ann@example.com")[0]
	f.signLink = l[strings.Index(l, "/esign/"):]
	k := s.Do(http.MethodPost, "/sites/default/apiKeys", map[string]any{"name": "dav", "permissions": []string{"READ", "WRITE"}}, f.admin)
	servertest.MustStatus(t, k, http.StatusOK)
	f.key = quiretest.Str(t, k.JSON(t), "apiKey")
	return f
}

func (f *storedFixture) get(method string, r storedRequest) *quiretest.Response {
	h := map[string]string{}
	if r.basic != "" {
		h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("apikey:"+r.basic))
	}
	return f.s.DoHeaders(method, r.url, nil, r.token, h)
}

// TestStoredBytes_RoutesClassified: every route listed as serving stored
// bytes has an exerciser here, and every exerciser names a route.
func TestStoredBytes_RoutesClassified(t *testing.T) {
	s := quiretest.NewServer(t)
	all := map[string]bool{}
	for _, r := range apiRoutes(s) {
		all[r.String()] = true
	}
	for k := range server.StoredRoutes() {
		if !all[k] {
			t.Errorf("StoredRoutes names %q, which is not a route", k)
		}
		if storedExercisers[k] == nil {
			t.Errorf("%s serves stored bytes and has no exerciser in storedExercisers", k)
		}
	}
	for k := range storedExercisers {
		if _, ok := server.StoredRoutes()[k]; !ok {
			t.Errorf("storedExercisers has %s, which StoredRoutes does not list", k)
		}
	}
}

// checkStoredHeaders fails unless r carries the stored-bytes headers.
func checkStoredHeaders(t *testing.T, what string, r *quiretest.Response, active bool) {
	t.Helper()
	if r.Status != http.StatusOK {
		t.Errorf("%s: %d %.200s", what, r.Status, r.Body)
		return
	}
	if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, got)
	}
	if got := r.Header.Get("Content-Security-Policy"); !strings.Contains(got, "sandbox") {
		t.Errorf("%s: Content-Security-Policy %q, want sandbox", what, got)
	}
	disp, _, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
	switch {
	case err != nil:
		t.Errorf("%s: Content-Disposition %q: %v", what, r.Header.Get("Content-Disposition"), err)
	case active && disp != "attachment":
		t.Errorf("%s: an active type is served %q, want attachment", what, disp)
	}
}

// TestStoredBytes_SafeHeaders: each route that serves stored bytes,
// reached with valid credentials, answers with nosniff, a sandbox and a
// Content-Disposition (attachment for HTML, SVG and XML even when inline
// was asked), on GET and HEAD.
func TestStoredBytes_SafeHeaders(t *testing.T) {
	f := newStoredFixture(t)
	for route, ex := range storedExercisers {
		t.Run(route, func(t *testing.T) {
			for _, rq := range ex(t, f) {
				for _, m := range []string{http.MethodGet, http.MethodHead} {
					r := f.get(m, rq)
					checkStoredHeaders(t, m+" "+rq.what, r, rq.active)
				}
			}
		})
	}
}

// TestStoredBytes_NoOtherRoute walks every GET route of the table with
// the page as its document (and the WebDAV path of it): an answer that
// carries the page's script outside JSON must carry the stored-bytes
// headers. Routes listed in StoredRoutes must answer through them too.
func TestStoredBytes_NoOtherRoute(t *testing.T) {
	f := newStoredFixture(t)
	params := routeFixtures(t, f.s, f.admin)
	params["documentId"] = f.html
	checked := 0
	for _, rt := range apiRoutes(f.s) {
		if rt.method != http.MethodGet {
			continue
		}
		path, ok := fill(rt, params)
		if !ok {
			t.Errorf("%s: no fixture for a parameter", rt)
			continue
		}
		h := map[string]string{}
		if strings.HasPrefix(rt.template, "/dav") {
			path = strings.Replace(path, "*", "default/pages/page.html", 1)
			h["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("apikey:"+f.key))
		}
		path = strings.Replace(path, "*", "x", 1)
		for _, q := range []string{"", "?inline=true"} {
			r := noRedirect(t, f.s, path+q, f.admin, h)
			checked++
			if !strings.Contains(string(r.Body), storedMarker) {
				continue
			}
			if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct == "application/json" {
				continue
			}
			if _, listed := server.StoredRoutes()[rt.String()]; !listed {
				t.Errorf("%s answers the stored page as %q but is not in StoredRoutes", rt, r.Header.Get("Content-Type"))
			}
			checkStoredHeaders(t, rt.String()+q, r, true)
		}
	}
	if checked < 100 {
		t.Errorf("only %d requests: the route table was not walked", checked)
	}
}

// noRedirect GETs path without following a redirect: the route that
// answers the bytes is the one judged (a redirect's target is walked as
// its own route).
func noRedirect(t *testing.T, s *quiretest.Server, path, tok string, h map[string]string) *quiretest.Response {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", tok)
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Errorf("GET %s: %v", path, err)
		return &quiretest.Response{Header: http.Header{}}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &quiretest.Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}
