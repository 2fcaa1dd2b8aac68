package server_test

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"

	"quire/quiretest"
)

// TestCoreOperations_Routed: every operation FormKiQ core implements
// (testdata/core-operations.txt) has a route, and one marked "later" does
// not yet (so the mark is removed when it lands).
func TestCoreOperations_Routed(t *testing.T) {
	s := quiretest.NewServer(t)
	norm := regexp.MustCompile(`\{[^}]+\}|:[A-Za-z]+|\*`)
	routed := map[string]bool{}
	for _, r := range apiRoutes(s) {
		routed[r.method+" "+norm.ReplaceAllString(r.template, "{}")] = true
	}
	f, err := os.Open("testdata/core-operations.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, later, _ := strings.Cut(line, " # later:")
		fields := strings.Fields(op)
		if len(fields) != 2 {
			t.Fatalf("bad line %q", line)
		}
		n++
		key := fields[0] + " " + norm.ReplaceAllString(fields[1], "{}")
		switch {
		case later == "" && !routed[key]:
			t.Errorf("%s is not routed", op)
		case later != "" && routed[key]:
			t.Errorf("%s is routed now: remove its 'later' mark", op)
		}
	}
	if n < 130 {
		t.Fatalf("only %d operations listed", n)
	}
}
