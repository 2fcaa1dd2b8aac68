package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// layers are the floors of the house server/ is (issue 45): a package
// imports packages of lower floors only, never one of its own floor or
// above, except the sideways imports of sideways. Every package under
// server/ has a floor here: a new one needs a decision, not a default.
//
//	4  test helpers shared by the test-only packages (servertest)
//	3  the core: New, Listen, Shutdown, the route table, transport (server)
//	2  the domains: the handlers of one part of the API each
//	1  the request API the domains stand on (internal/api)
//	0  switches tests turn (internal/testhooks)
var layers = map[string]int{
	"quire/server/internal/servertest": 4,
	"quire/server":                     3,
	// The domains, each with its black-box tests over HTTP beside it.
	"quire/server/admin":              2,
	"quire/server/content":            2,
	"quire/server/dav":                2,
	"quire/server/directory":          2,
	"quire/server/documents":          2,
	"quire/server/flow":               2,
	"quire/server/intake":             2,
	"quire/server/search":             2,
	"quire/server/signatures":         2,
	"quire/server/vocabulary":         2,
	"quire/server/internal/api":       1,
	"quire/server/internal/testhooks": 0,
}

// sideways are the imports allowed within one floor, as "from -> to",
// each with its reason. content (a document's bytes and the rules for
// serving them) and documents are the domains others stand on; they
// import no domain but content.
var sideways = map[string]bool{
	// A signed or generated copy follows the document's watermark rules.
	"quire/server/signatures -> quire/server/content": true,
	// A document is created with its content (checksums, upload URLs),
	// archived and published through it.
	"quire/server/documents -> quire/server/content": true,
	// Search and fulltext writes take tags and values in the documents'
	// body shapes (TagIn, FlexString).
	"quire/server/search -> quire/server/documents": true,
	// Actions and workflows are given in the documents' body shapes and
	// checked as a document's create checks them.
	"quire/server/flow -> quire/server/documents": true,
	// Intake writes a file's bytes through content (upload limits, chunks
	// tracked against the sweep) and converts a profile's or webhook's
	// actions and tags in the documents' body shapes.
	"quire/server/intake -> quire/server/content":   true,
	"quire/server/intake -> quire/server/documents": true,
	// WebDAV is a file manager's view of the same documents: it writes
	// bytes through content, deletes and moves as documents and search do
	// (DELETE /documents, PATCH /folders), and takes files as an intake
	// source (Basic credentials, the webdav profile's errors).
	"quire/server/dav -> quire/server/content":   true,
	"quire/server/dav -> quire/server/documents": true,
	"quire/server/dav -> quire/server/search":    true,
	"quire/server/dav -> quire/server/intake":    true,
	// A short link to a document is given as the document's short URL
	// (content) and its target checked as a document deep link
	// (documents); a site's public documents rate is bounded as documents
	// bound it; rotating the secrets key reseals the signing secrets under
	// the signatures' additional data (SecretAAD).
	"quire/server/admin -> quire/server/content":    true,
	"quire/server/admin -> quire/server/documents":  true,
	"quire/server/admin -> quire/server/signatures": true,
}

type listedPackage struct {
	ImportPath string
	Imports    []string
}

// serverPackages lists the packages under server/ with their imports
// (tests' imports are not edges of the house: black-box tests import the
// core to talk to it).
func serverPackages(t *testing.T) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "quire/server/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, errb.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(&out)
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < len(layers) {
		t.Fatalf("go list found %d packages under server/, the layers name %d", len(pkgs), len(layers))
	}
	return pkgs
}

func TestLayering_ImportsRunDownOnly(t *testing.T) {
	for _, b := range layerViolations(serverPackages(t)) {
		t.Error(b)
	}
}

// layerViolations are the imports of pkgs that break the floors.
func layerViolations(pkgs []listedPackage) []string {
	var bad []string
	for _, p := range pkgs {
		from, ok := layers[p.ImportPath]
		if !ok {
			bad = append(bad, p.ImportPath+": no floor in layers (layering_test.go)")
			continue
		}
		for _, imp := range p.Imports {
			if imp != "quire/server" && !strings.HasPrefix(imp, "quire/server/") {
				continue
			}
			to, ok := layers[imp]
			switch {
			case !ok:
				bad = append(bad, p.ImportPath+" imports "+imp+", which has no floor")
			case to > from:
				bad = append(bad, p.ImportPath+" imports "+imp+": an arrow back up")
			case to == from && !sideways[p.ImportPath+" -> "+imp]:
				bad = append(bad, p.ImportPath+" imports "+imp+": sideways, not in sideways")
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// The check itself can fail: an arrow up, a sideways import and a
// package without a floor are each caught.
func TestLayering_CatchesWrongImports(t *testing.T) {
	cases := []struct {
		name string
		pkg  listedPackage
		want string
	}{
		{"request API imports the core", listedPackage{"quire/server/internal/api", []string{"quire/server"}}, "an arrow back up"},
		{"a domain imports the core", listedPackage{"quire/server/documents", []string{"quire/server/internal/api", "quire/server"}}, "an arrow back up"},
		{"a domain imports another", listedPackage{"quire/server/search", []string{"quire/server/flow"}}, "sideways"},
		{"a package without a floor", listedPackage{"quire/server/newthing", nil}, "no floor"},
		{"an import without a floor", listedPackage{"quire/server", []string{"quire/server/newthing"}}, "has no floor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := layerViolations([]listedPackage{c.pkg})
			if len(got) != 1 || !strings.Contains(got[0], c.want) {
				t.Errorf("violations %q, want one saying %q", got, c.want)
			}
		})
	}
	if got := layerViolations([]listedPackage{{"quire/server", []string{"quire/server/internal/api", "quire/storage"}}}); len(got) != 0 {
		t.Errorf("the core importing the request API: %q", got)
	}
	for k := range sideways {
		from, to, _ := strings.Cut(k, " -> ")
		if layers[from] != layers[to] {
			t.Errorf("sideways %q joins two floors", k)
		}
	}
}
