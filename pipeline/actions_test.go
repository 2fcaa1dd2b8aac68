package pipeline

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestActions_OneRegistry: the action types the API accepts (Known,
// Types) are exactly the ones the pipeline has an engine for, and each
// has its parameter check and its engine.
func TestActions_OneRegistry(t *testing.T) {
	reg := Actions()
	types := reg.Types()
	if len(types) == 0 || !slices.IsSorted(types) {
		t.Fatalf("Types() = %v, want the action types sorted", types)
	}
	for _, typ := range types {
		if !reg.Known(typ) {
			t.Errorf("%s is listed but not Known", typ)
		}
		spec, ok := reg.Spec(typ)
		if !ok || spec.Type != typ || spec.Check == nil || spec.Run == nil {
			t.Errorf("%s: spec %+v (found %v) lacks its type, check or engine", typ, spec, ok)
			continue
		}
		eng := engines[typ]
		if eng == nil || reflect.ValueOf(eng).Pointer() != reflect.ValueOf(spec.Run).Pointer() {
			t.Errorf("%s: the pipeline runs another engine than its spec's", typ)
		}
	}
	for typ := range engines {
		// Tests add engines of their own, named TEST_*.
		if !strings.HasPrefix(typ, "TEST_") && !reg.Known(typ) {
			t.Errorf("the pipeline runs %s, which the API does not accept", typ)
		}
	}
	for _, typ := range []string{"", "ocr", "SHRED", "TEST_OK"} {
		if reg.Known(typ) {
			t.Errorf("Known(%q) = true", typ)
		}
		if items := reg.Check(typ, "", Params{"x": "y"}, nil); items != nil {
			t.Errorf("Check(%q) = %v, want nothing for an unknown type", typ, items)
		}
	}
	// Types is a copy: a caller cannot change the registry.
	types[0] = "SHRED"
	if reg.Known("SHRED") || reg.Types()[0] == "SHRED" {
		t.Fatalf("changing Types() changed the registry")
	}
}

// TestActions_SpecsComplete: a registry refuses a spec without a check or
// an engine, or a type given twice, when it is built (at start).
func TestActions_SpecsComplete(t *testing.T) {
	ok := ActionSpec{Type: "A", Check: noParams, Run: runPublish}
	for name, specs := range map[string][]ActionSpec{
		"no check":  {{Type: "A", Run: runPublish}},
		"no engine": {{Type: "A", Check: noParams}},
		"twice":     {ok, ok},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatalf("newRegistry accepted %s", name)
				}
			}()
			newRegistry(specs)
		})
	}
	if r := newRegistry([]ActionSpec{ok}); !r.Known("A") || len(r.Types()) != 1 {
		t.Fatalf("newRegistry(%v) = %v", ok, r.Types())
	}
}

// TestParams_Get: parameters are read as the API takes them: strings
// trimmed, numbers and booleans as their JSON text, absent as "".
func TestParams_Get(t *testing.T) {
	p := Params{"s": "  a b ", "n": float64(-1), "b": true, "null": nil}
	for k, want := range map[string]string{"s": "a b", "n": "-1", "b": "true", "null": "", "absent": ""} {
		if got := p.Get(k); got != want {
			t.Errorf("Get(%q) = %q, want %q", k, got, want)
		}
	}
}
