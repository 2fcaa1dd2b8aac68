package storage

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// declaredOps parses the package's Go files (tests aside) and returns every
// constant declared with type Op, by name, with its value.
func declaredOps(t *testing.T) map[string]Op {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	ops := map[string]Op{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Op" {
					continue
				}
				for _, n := range vs.Names {
					if _, dup := ops[n.Name]; dup {
						t.Errorf("%s: Op constant %s declared twice", name, n.Name)
					}
					ops[n.Name] = ""
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: Op constant %s is not a string literal", name, vs.Names[i].Name)
						continue
					}
					ops[vs.Names[i].Name] = Op(strings.Trim(lit.Value, "\"`"))
				}
			}
		}
	}
	return ops
}

// TestEveryOpHasAnApplier checks that the appliers table in command.go and
// the Op constants declared anywhere in the package are the same set.
func TestEveryOpHasAnApplier(t *testing.T) {
	t.Parallel() // own store, no package or process state
	declared := declaredOps(t)
	if len(declared) < 40 {
		t.Fatalf("found %d Op constants, the parser missed some", len(declared))
	}
	byValue := map[Op]string{}
	for name, op := range declared {
		if !strings.HasPrefix(name, "Op") {
			t.Errorf("Op constant %s: name does not start with Op", name)
		}
		if op == "" {
			t.Errorf("Op constant %s has no value", name)
		}
		if other, dup := byValue[op]; dup {
			t.Errorf("Op constants %s and %s share the value %q", name, other, op)
		}
		byValue[op] = name
		if fn, ok := appliers[op]; !ok || fn == nil {
			t.Errorf("Op constant %s (%q) has no applier in the appliers table", name, op)
		}
		if _, ok := activityOps[op]; !ok {
			t.Errorf("Op constant %s (%q) is not in activityOps: say whether it leaves activity entries", name, op)
		}
	}
	for op := range activityOps {
		if _, ok := byValue[op]; !ok {
			t.Errorf("activityOps lists %q, which is no Op constant", op)
		}
	}
	for op := range appliers {
		if _, ok := byValue[op]; !ok {
			t.Errorf("appliers table lists %q, which is no Op constant", op)
		}
	}
}

// TestCommandRoundTrip encodes a command of every op, with no payload and
// with a sample one, and checks DecodeCommand gives it back unchanged and
// that it encodes again to the same bytes.
func TestCommandRoundTrip(t *testing.T) {
	t.Parallel() // own store, no package or process state
	ops := make([]Op, 0, len(appliers))
	for op := range appliers {
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i] < ops[j] })
	at := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	payloads := []struct {
		name    string
		payload any
	}{
		{"nil", nil},
		{"sample", map[string]any{"documentId": "d1", "path": "a/b é.txt", "n": 3, "tags": []any{"x", map[string]any{"k": "v"}}}},
		{"in memory", PutChunks{Chunks: []Chunk{{SHA: "abc", Size: 3, Value: []byte{codecRaw, 'a', 'b', 'c'}}}}},
	}
	for _, op := range ops {
		for _, p := range payloads {
			t.Run(string(op)+"/"+p.name, func(t *testing.T) {
				c, err := NewCommand(op, "site/one", "joe@example.com", at, p.payload)
				if err != nil {
					t.Fatal(err)
				}
				b, err := c.Encode()
				if err != nil {
					t.Fatal(err)
				}
				got, err := DecodeCommand(b)
				if err != nil {
					t.Fatal(err)
				}
				want := *c
				if c.wire == nil {
					want.local = nil // in-process only; Encode moved it to Data
				} // a chunk command's binary form decodes to its payload (wire.go)
				if !reflect.DeepEqual(*got, want) {
					t.Fatalf("round trip changed the command:\n got %+v\nwant %+v", *got, want)
				}
				b2, err := got.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b, b2) {
					t.Fatalf("re-encoding differs:\n%s\n%s", b, b2)
				}
				if pc, ok := p.payload.(PutChunks); ok {
					dp, err := decode[PutChunks](got)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(*dp, pc) {
						t.Fatalf("in-memory payload after round trip = %+v, want %+v", *dp, pc)
					}
				}
			})
		}
	}
}
