package server

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"quire/server/dav"
	"quire/server/internal/api"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files from the code")

// TestRoutes_Golden holds the route table to testdata/routes.golden: every
// route fiber serves, with its method, path, credential (public with its
// rate-limit class, or a token with where the site comes from, the
// permission and the Admins-only wrapper) and its flags (Idempotency-Key,
// artifactId, versionKey, shareKey, stored bytes, refused). The golden
// file was recorded before server/ was split into packages (issue 45): a
// route, a permission or a flag that changes fails here.
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

// routeAccess is what the route table gives a route: its credential.
type routeAccess struct {
	public bool
	class  string // rate-limit class of a public route
	site   string // query, path or none
	perm   string // the site permission wrap checks ("-": none)
	admins bool   // wrapped in requireAdmin
}

// routesGolden renders every route of a server with its access and flags,
// one line each, sorted by path then method.
func routesGolden(t *testing.T) string {
	t.Helper()
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	s := New(api.Deps{Store: db, Logger: quietLog()})
	defer s.sched.Stop()
	access := routeAccessFromSource(t)
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
		a, ok := access[k]
		if !ok && r.Method == "HEAD" {
			a, ok = access["GET "+r.Path]
		}
		if !ok {
			t.Errorf("route %s: not found in routes.go", k)
			continue
		}
		var f []string
		if a.public {
			f = append(f, "public", "class="+a.class)
			if c := s.limitClass[k]; c != a.class {
				t.Errorf("route %s: class %q in routes.go, %q registered", k, a.class, c)
			}
		} else {
			f = append(f, "token", "site="+a.site, "perm="+a.perm)
			if a.admins {
				f = append(f, "admins")
			}
		}
		get := k
		if r.Method == "HEAD" {
			get = "GET " + r.Path
		}
		switch {
		case keyedRoute(r.Method, r.Path):
			f = append(f, "keyed")
		case unkeyedRoutes[k] != "":
			f = append(f, "unkeyed="+strconv.Quote(unkeyedRoutes[k]))
		}
		if writingReads[k] {
			f = append(f, "writingRead")
		}
		if api.ArtifactRoutes[get] {
			f = append(f, "artifactId")
		}
		if api.VersionKeyRoutes[get] {
			f = append(f, "versionKey")
		}
		if api.ShareRoutes[k] {
			f = append(f, "shareKey")
		}
		if v, ok := api.StoredRoutes[get]; ok {
			f = append(f, "stored="+strconv.Quote(v))
		}
		for _, rr := range refusedRoutes {
			if rr.method+" "+rr.path == k {
				f = append(f, "refused="+strconv.Quote(rr.reason))
			}
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

// routeAccessFromSource reads each route's credential from routes.go as
// written (pub, q, sp, none, admin and requireAdmin), by method and path.
func routeAccessFromSource(t *testing.T) map[string]routeAccess {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "routes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]routeAccess{}
	str := func(e ast.Expr) string {
		if l, ok := e.(*ast.BasicLit); ok {
			v, _ := strconv.Unquote(l.Value)
			return v
		}
		return ""
	}
	perms := map[string]string{"read": "READ", "write": "WRITE", "del": "DELETE", "govern": "GOVERN", "noPerm": "-"}
	permOf := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return perms[e.Name]
		case *ast.SelectorExpr:
			return strings.ToUpper(strings.TrimPrefix(e.Sel.Name, "Perm"))
		}
		t.Fatalf("permission %T", e)
		return ""
	}
	isAdmin := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := c.Fun.(*ast.Ident)
		return ok && id.Name == "requireAdmin"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			if fn.Name == "pub" {
				m, p := str(call.Args[0]), str(call.Args[1])
				cls := call.Args[2].(*ast.SelectorExpr).Sel.Name
				if m == "" { // the WebDAV loop: every WebDAV method
					for _, dm := range dav.Methods {
						out[dm+" "+p] = routeAccess{public: true, class: strings.ToLower(cls)}
					}
					return true
				}
				out[m+" "+p] = routeAccess{public: true, class: strings.ToLower(cls)}
			}
		case *ast.SelectorExpr:
			x, ok := fn.X.(*ast.Ident)
			if !ok || x.Name != "authed" {
				return true
			}
			if fn.Sel.Name == "Add" { // refused routes
				for _, r := range refusedRoutes {
					out[r.method+" "+r.path] = routeAccess{site: "none", perm: "-"}
				}
				return true
			}
			m, p := strings.ToUpper(fn.Sel.Name), str(call.Args[0])
			w := call.Args[1].(*ast.CallExpr)
			var a routeAccess
			switch wn := w.Fun.(*ast.Ident).Name; wn {
			case "q", "sp":
				a = routeAccess{site: map[string]string{"q": "query", "sp": "path"}[wn], perm: permOf(w.Args[0]), admins: isAdmin(w.Args[1])}
			case "none":
				a = routeAccess{site: "none", perm: "-"}
			case "admin":
				a = routeAccess{site: "none", perm: "-", admins: true}
			default:
				t.Fatalf("wrapper %s", wn)
			}
			out[m+" "+p] = a
		}
		return true
	})
	if len(out) < 100 {
		t.Fatalf("only %d routes read from routes.go", len(out))
	}
	return out
}

var _ = fmt.Sprint
