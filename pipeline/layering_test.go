package pipeline_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// floors are the pipeline's packages (DESIGN.md, "Packages"): a package
// imports pipeline packages of lower floors only, so nothing below
// imports the pipeline or a package beside it. A new package needs a
// floor here.
//
//	3  the queue, workers, registry and engines (pipeline)
//	2  work engines and the server hand off: OCR, PDF work on request
//	1  conversions, text matching, and the clients of mail, LLM, clamd
//	   and webhook receivers
//	0  external programs and the marks on engine errors (engine)
var floors = map[string]int{
	"quire/pipeline":           3,
	"quire/pipeline/ocr":       2,
	"quire/pipeline/pdfwork":   2,
	"quire/pipeline/convert":   1,
	"quire/pipeline/mailer":    1,
	"quire/pipeline/llmchat":   1,
	"quire/pipeline/clamd":     1,
	"quire/pipeline/webhook":   1,
	"quire/pipeline/textmatch": 1,
	"quire/pipeline/engine":    0,
}

func TestPackages_ImportDownOnly(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-json", "quire/pipeline/...")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v: %s", err, errb.String())
	}
	seen := 0
	for dec := json.NewDecoder(&out); ; {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		from, ok := floors[p.ImportPath]
		if !ok {
			t.Errorf("%s: no floor in floors (layering_test.go)", p.ImportPath)
			continue
		}
		seen++
		for _, imp := range p.Imports {
			if from == 0 && strings.HasPrefix(imp, "quire/") {
				t.Errorf("%s imports %s: the engine leaf imports nothing of Quire's", p.ImportPath, imp)
			}
			to, ok := floors[imp]
			switch {
			case imp != "quire/pipeline" && !strings.HasPrefix(imp, "quire/pipeline/"):
			case !ok:
				t.Errorf("%s imports %s, which has no floor", p.ImportPath, imp)
			case to >= from:
				t.Errorf("%s imports %s: not a floor below", p.ImportPath, imp)
			}
		}
	}
	if seen != len(floors) {
		t.Errorf("go list found %d of the %d packages in floors", seen, len(floors))
	}
}
