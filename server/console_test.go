package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/console"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// consoleDo sends a request with headers and cookies, without following
// redirects.
func consoleDo(t *testing.T, s *quiretest.Server, method, path, body string, headers map[string]string, cookies ...*http.Cookie) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestConsole_Served: GET / leads to /console/, whose files come
// gzip-compressed with a strict CSP and the usual security headers, and
// revalidate by ETag; an unknown file is a 404.
func TestConsole_Served(t *testing.T) {
	s := quiretest.NewServer(t)
	for _, p := range []string{"/", "/console"} {
		resp, _ := consoleDo(t, s, "GET", p, "", nil)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
			t.Errorf("GET %s: %d Location %q, want 302 to /console/", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	tests := []struct {
		path, ctype, contains string
	}{
		{"/console/", "text/html; charset=utf-8", `<script type="module" src="app.bundle.js">`},
		{"/console/app.bundle.js", "text/javascript; charset=utf-8", "from \"./js/api.js\""},
		{"/console/js/app.js", "text/javascript; charset=utf-8", "import"},
		{"/console/app.css", "text/css; charset=utf-8", "font-family"},
		{"/console/i18n/de.js", "text/javascript; charset=utf-8", "Anmelden"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := consoleDo(t, s, "GET", tt.path, "", map[string]string{"Accept-Encoding": "gzip"})
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != tt.ctype || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader([]byte(body)))
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := io.ReadAll(zr)
			if !strings.Contains(string(plain), tt.contains) {
				t.Errorf("body lacks %q", tt.contains)
			}
			for k, v := range map[string]string{"Content-Security-Policy": console.CSP, "X-Content-Type-Options": "nosniff",
				"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cross-Origin-Opener-Policy": "same-origin"} {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			again, _ := consoleDo(t, s, "GET", tt.path, "", map[string]string{"If-None-Match": resp.Header.Get("ETag")})
			if again.StatusCode != http.StatusNotModified {
				t.Errorf("revalidation: %d, want 304", again.StatusCode)
			}
		})
	}
	if resp, body := consoleDo(t, s, "GET", "/console/", "", nil); resp.Header.Get("Content-Encoding") != "" || !strings.Contains(body, "<!doctype html>") {
		t.Errorf("without Accept-Encoding: %q %.40s", resp.Header.Get("Content-Encoding"), body)
	}
	for _, p := range []string{"/console/nope.js", "/console/../go.mod", "/console/console.go", "/console/js/"} {
		if resp, _ := consoleDo(t, s, "GET", p, "", nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

// TestConsole_RefreshCookie: with refreshCookie the sign-in puts the
// refresh token in an HttpOnly, SameSite=Strict cookie scoped to /login
// and not in the answer; the cookie refreshes only with the console
// header and from this server's origin; sign-out revokes it.
func TestConsole_RefreshCookie(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "cora"}, "temporaryPassword": "Temp-pass-1"}, admin), http.StatusOK)
	servertest.FirstSignIn(t, s, "cora", "Temp-pass-1", "Cora-pass-1")
	hdr := map[string]string{"X-Quire-Console": "1"}

	// Without the console header no cookie is handed out.
	resp, body := consoleDo(t, s, "POST", "/login", `{"username":"cora","password":"Cora-pass-1","refreshCookie":true}`, nil)
	if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
		t.Fatalf("cookie sign-in without the header: %d %s", resp.StatusCode, body)
	}
	resp, body = consoleDo(t, s, "POST", "/login", `{"username":"cora","password":"Cora-pass-1","refreshCookie":true}`, hdr)
	if resp.StatusCode != http.StatusOK || strings.Contains(body, "RefreshToken") || !strings.Contains(body, "AccessToken") {
		t.Fatalf("cookie sign-in: %d %s", resp.StatusCode, body)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "quire_refresh" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/login" || cookie.Secure || cookie.MaxAge < 86400 {
		t.Fatalf("refresh cookie %+v (Set-Cookie %q)", cookie, resp.Header.Values("Set-Cookie"))
	}
	jar := &http.Cookie{Name: cookie.Name, Value: cookie.Value}

	refresh := []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"no console header", map[string]string{"Origin": s.URL}, http.StatusForbidden},
		{"another origin", map[string]string{"X-Quire-Console": "1", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"another port of the host", map[string]string{"X-Quire-Console": "1", "Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"same origin", map[string]string{"X-Quire-Console": "1", "Origin": s.URL}, http.StatusOK},
		{"no Origin (not a browser)", map[string]string{"X-Quire-Console": "1"}, http.StatusOK},
	}
	for _, tt := range refresh {
		t.Run("refresh "+tt.name, func(t *testing.T) {
			resp, body := consoleDo(t, s, "POST", "/login/refresh", `{}`, tt.headers, jar)
			if resp.StatusCode != tt.status {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.status == http.StatusOK && !strings.Contains(body, "AccessToken") {
				t.Fatalf("refresh answer %s", body)
			}
		})
	}
	// Sign-out needs the header too, then the cookie is dead and cleared.
	if resp, body := consoleDo(t, s, "POST", "/login/logout", `{}`, map[string]string{"Origin": "http://evil.example", "X-Quire-Console": "1"}, jar); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin sign-out: %d %s", resp.StatusCode, body)
	}
	resp, body = consoleDo(t, s, "POST", "/login/logout", `{}`, hdr, jar)
	if resp.StatusCode != http.StatusOK || body != `{"message":"Signed out"}` {
		t.Fatalf("sign-out: %d %s", resp.StatusCode, body)
	}
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || (c.Name == "quire_refresh" && c.Value == "" && (c.MaxAge < 0 || c.Expires.Before(time.Now())))
	}
	if !cleared {
		t.Errorf("sign-out did not clear the cookie: %q", resp.Header.Values("Set-Cookie"))
	}
	if resp, body := consoleDo(t, s, "POST", "/login/refresh", `{}`, hdr, jar); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("refresh after sign-out: %d %s", resp.StatusCode, body)
	}
	// A body refresh token (FormKiQ's clients) is revoked the same way.
	_, rt := servertest.Tokens(t, servertest.Login(s, "cora", "Cora-pass-1"))
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": rt}, ""), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/logout", map[string]any{"refreshToken": rt}, ""), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": rt}, ""), http.StatusUnauthorized)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/login/logout", map[string]any{}, ""), http.StatusForbidden)
}

// TestConsole_OpenReviewsInbox: GET /reviews lists the site's open
// reviews the caller could decide (approval groups honoured), paged; a
// completed review leaves the inbox.
func TestConsole_OpenReviewsInbox(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	doc := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "in/contract.txt", "content": "terms", "contentType": "text/plain"})
	add := func(body map[string]any) string {
		r := s.Do(http.MethodPost, "/documents/"+doc+"/reviews", map[string]any{"review": body}, admin)
		servertest.MustStatus(t, r, http.StatusCreated)
		return quiretest.Str(t, r.JSON(t), "reviewId")
	}
	open := add(map[string]any{"reviewCategory": "anyone", "requiredDecisions": 1})
	legal := add(map[string]any{"reviewCategory": "legal only", "requiredDecisions": 1, "approvalGroups": []string{"legal"}})
	done := add(map[string]any{"reviewCategory": "done", "requiredDecisions": 1})
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/reviews/"+done+"/decisions", map[string]any{"decision": map[string]any{"type": "APPROVAL", "decision": "APPROVED"}}, admin), http.StatusCreated)
	ids := func(tok, query string) []string {
		r := s.Do(http.MethodGet, "/reviews"+query, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		var out []string
		for _, x := range quiretest.List(t, r.JSON(t), "reviews") {
			o := quiretest.Obj(t, x)
			if o["path"] != "in/contract.txt" || o["documentId"] != doc {
				t.Errorf("review %v", o)
			}
			out = append(out, quiretest.Str(t, o, "reviewId"))
		}
		return out
	}
	has := func(l []string, id string) bool {
		for _, x := range l {
			if x == id {
				return true
			}
		}
		return false
	}
	staff := ids(s.Token("sam", "default"), "")
	if !has(staff, open) || has(staff, legal) || has(staff, done) {
		t.Errorf("staff inbox %v: want %s only", staff, open)
	}
	lawyer := ids(s.Token("lee", "default", "legal"), "")
	if !has(lawyer, open) || !has(lawyer, legal) || has(lawyer, done) || len(lawyer) != 2 {
		t.Errorf("legal inbox %v: want %s and %s", lawyer, open, legal)
	}
	r := s.Do(http.MethodGet, "/reviews?limit=1", nil, s.Token("lee", "default", "legal"))
	servertest.MustStatus(t, r, http.StatusOK)
	m := r.JSON(t)
	next := quiretest.Str(t, m, "next")
	if len(quiretest.List(t, m, "reviews")) != 1 || next == "" {
		t.Fatalf("page of 1: %s", r.Body)
	}
	rest := ids(s.Token("lee", "default", "legal"), "?limit=1&next="+next)
	if len(rest) != 1 || rest[0] == quiretest.Str(t, quiretest.Obj(t, quiretest.List(t, m, "reviews")[0]), "reviewId") {
		t.Errorf("second page %v after %s", rest, r.Body)
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/reviews?next=bogus", nil, admin), http.StatusBadRequest)
}
