package server_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server"
)

// referenceOperations reads testdata/reference-operations.txt: every
// operation of FormKiQ's 1.19.1 reference, as "METHOD /path".
func referenceOperations(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("testdata/reference-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(strings.Fields(line)) != 2 {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, line)
	}
	if len(out) < 200 {
		t.Fatalf("only %d reference operations", len(out))
	}
	return out
}

var refParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestReferenceSweep_EveryRouteAnswers sends every operation of the
// reference (with the route fixtures' ids, an empty JSON body) and fails
// on FormKiQ's "request handler not found": each is served, or refused on
// purpose with 501 and a reason.
func TestReferenceSweep_EveryRouteAnswers(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	params := routeFixtures(t, s, admin)
	for _, op := range referenceOperations(t) {
		method, tmpl, _ := strings.Cut(op, " ")
		path := refParam.ReplaceAllStringFunc(tmpl, func(m string) string {
			if v, ok := params[strings.Trim(m, "{}+")]; ok {
				return url.PathEscape(v)
			}
			return "x"
		})
		var body any
		if takesBody(method) {
			body = "{}"
		}
		r := s.DoHeaders(method, path, body, admin, map[string]string{"Content-Type": "application/json"})
		unrouted := r.Status == http.StatusNotFound && strings.Contains(string(r.Body), "request handler not found")
		switch {
		case r.Status == 0:
			t.Errorf("%s (%s %s): %s", op, method, path, r.Body)
		case unrouted:
			t.Errorf("%s (%s %s): %d %s", op, method, path, r.Status, r.Body)
		}
	}
}

// TestRefusedRoutes_Answer501: every route refused on purpose is a
// reference operation, answers a signed-in caller of either site 501 with
// its reason in FormKiQ's {"message"} shape, wants a token like any other
// route, and is listed in API.md.
func TestRefusedRoutes_Answer501(t *testing.T) {
	s := quiretest.NewServer(t)
	ops := map[string]bool{}
	for _, op := range referenceOperations(t) {
		m, p, _ := strings.Cut(op, " ")
		ops[m+" "+refParam.ReplaceAllString(p, "{}")] = true
	}
	apiMD, err := os.ReadFile("../API.md")
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`:(\w+)`)
	refused := server.RefusedRoutes()
	if len(refused) < 20 {
		t.Fatalf("only %d refused routes", len(refused))
	}
	callers := []struct{ name, tok, site string }{
		{"admin", s.Admin(), "default"},
		{"governor of finance", s.Token("fin", "finance"), "finance"},
		{"reader of default", s.Token("rex", "default_read"), "default"},
	}
	for k, reason := range refused {
		method, tmpl, _ := strings.Cut(k, " ")
		if !ops[method+" "+param.ReplaceAllString(tmpl, "{}")] {
			t.Errorf("%s is refused but is not a reference operation", k)
		}
		doc := param.ReplaceAllString(tmpl, "{$1}")
		if !strings.Contains(string(apiMD), "`"+method+" "+doc+"`") {
			t.Errorf("API.md does not list `%s %s`", method, doc)
		}
		path := param.ReplaceAllStringFunc(tmpl, func(m string) string {
			if m == ":siteId" {
				return "SITE"
			}
			return "x"
		})
		for _, c := range callers {
			p := strings.ReplaceAll(path, "SITE", c.site) + "?siteId=" + c.site
			r := s.Do(method, p, nil, c.tok)
			if r.Status != http.StatusNotImplemented {
				t.Errorf("%s as %s: %d %s, want 501", k, c.name, r.Status, r.Body)
				continue
			}
			if got, _ := r.JSON(t)["message"].(string); got != reason {
				t.Errorf("%s as %s: message %q, want %q", k, c.name, got, reason)
			}
		}
		if r := s.Do(method, strings.ReplaceAll(path, "SITE", "default"), nil, ""); r.Status != http.StatusUnauthorized {
			t.Errorf("%s without a token: %d %s, want 401", k, r.Status, r.Body)
		}
	}
}

// refusedReason reports whether r is the answer of a route refused on
// purpose: 501 with one of the registry's reasons.
func refusedReason(r *quiretest.Response) bool { return refusedBody(r.Body) }

// refusedBody reports whether b is a refused route's 501 body.
func refusedBody(b []byte) bool {
	var body struct{ Message string }
	if json.Unmarshal(b, &body) != nil {
		return false
	}
	for _, reason := range server.RefusedRoutes() {
		if body.Message == reason {
			return true
		}
	}
	return false
}

// The route-table tests (hostile input, permission matrix) cover the
// refused routes: they take any body and touch nothing.
func init() {
	for k := range server.RefusedRoutes() {
		method, _, _ := strings.Cut(k, " ")
		if takesBody(method) {
			routeSamples[k] = `{}`
		}
		notDocumentRoutes[k] = "refused on purpose with 501 (refused.go): touches nothing"
	}
}
