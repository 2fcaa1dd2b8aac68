package server_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// accessRule is the package of the one permission rule (issue 45).
const accessRule = "quire/access"

// accessDeciders are the functions of the rule that decide: who may use
// a permission in a folder (folder permissions, shares, an actor's
// rights). Its types, constants and helpers (Dir, Has, FolderDenied) are
// free to use.
var accessDeciders = map[string]bool{
	"Allows": true, "Governing": true, "Grants": true, "SharedWith": true, "Exempt": true,
	"Check": true, "Restricted": true, "Rights": true, "CheckAction": true, "CheckWriter": true,
}

// accessCallers are the only files (outside the rule's package and
// tests) that call a decider, each with its reason.
var accessCallers = map[string]string{
	// The one request-side guard: the request's Rights, loaded once.
	"server/internal/api/guard.go": "request side",
	// The appliers' in-transaction re-check of an action's adder and a
	// late writer.
	"storage/actionrights.go": "appliers",
	// A queue decision in a workflow: admins and governors always decide
	// (ActionActor.Exempt).
	"storage/workflows.go": "appliers",
	// Fulltext search hides the folders the rule refuses, asking the rule
	// folder by folder (FolderHide).
	"index/index.go": "the rule as an index query",
}

type typedPackage struct {
	ImportPath string
	Dir        string
	Export     string
	GoFiles    []string
	Imports    []string
	Deps       []string
	Standard   bool
}

// TestLayering_OneAccessRule: the permission rule has one home. The
// package access imports nothing of Quire (storage's appliers call it, so
// it stands below everything), and outside it only accessCallers call
// the functions that decide, found by type-checking every package of
// the module (a call through storage's aliases counts too).
func TestLayering_OneAccessRule(t *testing.T) {
	// The export data is compiled with the flags of `make vet` and `make
	// build` (CGO_ENABLED=0, -trimpath; Quire has no cgo file), which ran
	// before the tests: go list finds every package in the build cache.
	// With go's default flags it compiled the module and its dependencies
	// a third time, for this test alone (issue 45: 82 s of the server
	// package's wall on a cold cache, as CI's is).
	cmd := exec.Command("go", "list", "-trimpath", "-e", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles,Imports,Deps,Standard", "quire/...")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, errb.String())
	}
	exports := map[string]string{}
	var mine []typedPackage
	root := ""
	for dec := json.NewDecoder(&out); ; {
		var p typedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == accessRule {
			root = filepath.Dir(p.Dir)
			for _, imp := range p.Imports {
				if imp == "quire" || strings.HasPrefix(imp, "quire/") {
					t.Errorf("%s imports %s: the rule's package imports no Quire package", accessRule, imp)
				}
			}
		}
		if !p.Standard && (p.ImportPath == "quire" || strings.HasPrefix(p.ImportPath, "quire/")) && p.ImportPath != accessRule {
			mine = append(mine, p)
		}
	}
	if root == "" {
		t.Fatalf("go list did not list %s", accessRule)
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	callers := map[string][]string{}
	checked := 0
	for _, p := range mine {
		if !dependsOn(p, accessRule) || len(p.GoFiles) == 0 {
			continue
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			files = append(files, f)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp}
		if _, err := conf.Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		checked++
		for id, obj := range info.Uses {
			fn, ok := obj.(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Pkg().Path() != accessRule || !accessDeciders[fn.Name()] {
				continue
			}
			rel, _ := filepath.Rel(root, fset.Position(id.Pos()).Filename)
			rel = filepath.ToSlash(rel)
			callers[rel] = append(callers[rel], fn.FullName())
		}
	}
	if checked < 20 {
		t.Fatalf("type-checked %d packages that depend on %s; the module has more", checked, accessRule)
	}
	var files []string
	for f := range callers {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		if _, ok := accessCallers[f]; !ok {
			t.Errorf("%s evaluates the permission rule (%s): only the request-side guard and storage's appliers call it (accessCallers)", f, strings.Join(dedup(callers[f]), ", "))
		}
	}
	for f := range accessCallers {
		if len(callers[f]) == 0 {
			t.Errorf("accessCallers names %s, which calls no decider of %s: remove it", f, accessRule)
		}
	}
}

func dependsOn(p typedPackage, path string) bool {
	for _, d := range p.Deps {
		if d == path {
			return true
		}
	}
	return false
}

func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
