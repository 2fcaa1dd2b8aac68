package server

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"quire/server/internal/api"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files from the code")

// TestRoutes_Golden holds the route table to testdata/routes.golden: every
// route fiber serves, with its method, path, credential (public with its
// rate-limit class, or a token with where the site comes from, the
// permission and the Admins-only wrapper) and its flags (Idempotency-Key,
// artifactId, versionKey, shareKey, stored bytes, refused), all read from
// the route table's rows (routes.go). The golden file was recorded before
// server/ was split into packages and its side lists became row fields
// (issue 45): a route, a permission or a flag that changes fails here.
func TestRoutes_Golden(t *testing.T) {
	got := routesGolden(t)
	const file = "testdata/routes.golden"
	if *updateGolden {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the routes at line %d:\n got: %s\nwant: %s", file, i+1, g, w)
			}
		}
	}
}

// routesGolden renders every route of a server with its access and flags,
// one line each, sorted by path then method.
func routesGolden(t *testing.T) string {
	t.Helper()
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	s := New(api.Deps{Store: db, Logger: quietLog()})
	defer s.sched.Stop()
	type line struct{ path, method, text string }
	var lines []line
	seen := map[string]bool{}
	for _, r := range s.app.GetRoutes(true) {
		if r.Path == "/" && r.Method == "USE" {
			continue
		}
		k := r.Method + " " + r.Path
		if seen[k] {
			continue
		}
		seen[k] = true
		// A row of its own (HEAD /dav), else the GET row fiber's Get
		// registered HEAD for: credential and the GET's query flags, but
		// not the flags of the method itself (keys, shareKey, refused).
		a, own := s.rows[k]
		get := a
		if r.Method == "HEAD" {
			get = s.rows["GET "+r.Path]
			if !own {
				a = get
			}
		}
		if a == nil {
			t.Errorf("route %s: no row in routes.go", k)
			continue
		}
		var f []string
		if a.public != nil {
			f = append(f, "public", "class="+strings.ToLower(a.class))
			if c := s.limitClass[k]; c != a.class {
				t.Errorf("route %s: class %q in routes.go, %q registered", k, a.class, c)
			}
		} else {
			perm := string(a.perm)
			if perm == "" {
				perm = "-"
			}
			f = append(f, "token", "site="+map[api.SiteFrom]string{api.SiteQuery: "query", api.SitePath: "path", api.SiteNone: "none"}[a.site], "perm="+perm)
			if a.admins {
				f = append(f, "admins")
			}
		}
		switch {
		case keyedRoute(s.rows, r.Method, r.Path):
			f = append(f, "keyed")
		case own && a.unkeyed != "":
			f = append(f, "unkeyed="+strconv.Quote(a.unkeyed))
		}
		if own && a.writingRead {
			f = append(f, "writingRead")
		}
		if get != nil && get.artifactID {
			f = append(f, "artifactId")
		}
		if get != nil && get.versionKey {
			f = append(f, "versionKey")
		}
		if own && a.shareKey {
			f = append(f, "shareKey")
		}
		if get != nil && get.stored != "" {
			f = append(f, "stored="+strconv.Quote(get.stored))
		}
		if own && a.refused != "" {
			f = append(f, "refused="+strconv.Quote(a.refused))
		}
		lines = append(lines, line{r.Path, r.Method, k + "\t" + strings.Join(f, " ")})
	}
	sort.Slice(lines, func(i, j int) bool {
		if lines[i].path != lines[j].path {
			return lines[i].path < lines[j].path
		}
		return lines[i].method < lines[j].method
	})
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

var _ = fmt.Sprint
