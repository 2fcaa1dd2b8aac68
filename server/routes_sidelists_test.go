package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRoutes_NoSideLists: what a route takes and answers is a field of
// its row in the route table (routes.go), never a list beside it. No
// source file under server/ but routes.go names a route ("METHOD /path",
// the key side lists were indexed by) or a route's parameterised path as
// a string literal (test files and test helpers aside).
func TestRoutes_NoSideLists(t *testing.T) {
	rows := tableRows()
	keys, paths := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		keys[r.method+" "+r.path] = true
		if r.method == "GET" {
			keys["HEAD "+r.path] = true
		}
		if strings.ContainsAny(r.path, ":*") {
			paths[r.path] = true
		}
	}
	if len(keys) < 300 || len(paths) < 100 {
		t.Fatalf("only %d routes, %d parameterised paths in the table", len(keys), len(paths))
	}
	found := sideListLiterals(t, ".", keys, paths)
	for _, f := range found {
		t.Error(f)
	}
	// The check can fail: a side list written back is found.
	dir := t.TempDir()
	src := "package x\n\nvar sideList = map[string]bool{\"GET /documents/:documentId/url\": true}\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := sideListLiterals(t, dir, keys, paths); len(got) != 1 {
		t.Errorf("a side list written back: found %q, want one", got)
	}
}

// sideListLiterals are the route keys and paths written as string
// literals in the non-test Go files under root, except routes.go.
func sideListLiterals(t *testing.T, root string, keys, paths map[string]bool) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Test data, and the helpers of the test-only packages (they read
		// a route's metrics by its label, as a client would).
		if d.IsDir() && (d.Name() == "testdata" || filepath.ToSlash(p) == "internal/servertest") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || filepath.Clean(p) == "routes.go" {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			l, ok := n.(*ast.BasicLit)
			if !ok || l.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(l.Value)
			if err == nil && (keys[v] || paths[v]) {
				out = append(out, fset.Position(l.Pos()).String()+": "+strconv.Quote(v)+" names a route outside the route table (routes.go): make it a field of the route's row")
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
