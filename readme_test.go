package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
)

// TestMain removes the quire command TestREADME built
// (quiretest.QuireBinary) when the package's tests end.
func TestMain(m *testing.M) {
	code := m.Run()
	quiretest.RemoveQuireBinary()
	os.Exit(code)
}

// readmeBlock is one fenced block of README.md.
type readmeBlock struct {
	section string // the "## " heading it is under
	lang    string
	text    string
	line    int
}

func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var (
		out     []readmeBlock
		section string
		cur     *readmeBlock
	)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```"):
			cur = &readmeBlock{section: section, lang: strings.TrimPrefix(line, "```"), line: n}
		case strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: a block is never closed", cur.line)
	}
	return out
}

// TestREADME runs every sh block of README.md as written, in a fresh
// directory where bin/quire is the shipped quire command
// (quiretest.QuireBinary), with each 127.0.0.1 port the README names
// moved to a free one. The walk-through's blocks run while
// a server started as `make run` starts it serves; the cluster block
// starts its own nodes. A failing command (curl answers 4xx/5xx too)
// fails the block.
func TestREADME(t *testing.T) {
	t.Parallel()
	quiretest.NeedProgram(t, "curl", "curl")
	// bin/quire is the shipped program, as `make build` makes it from
	// this tree (not this race-built test binary).
	ran := runREADME(t, quiretest.QuireCommand(t), func(readmeBlock) bool { return true })
	if ran < 3 {
		t.Fatalf("%d sh blocks ran: the walk-through, sign-in and cluster blocks are missing", ran)
	}
}

// runREADME runs README.md's sh blocks that pick chooses in a fresh
// directory whose bin/quire runs quireCmd (a shell command line ending in
// "$@"), while a server started as `make run` starts it serves, and
// returns how many ran.
func runREADME(t *testing.T, quireCmd string, pick func(readmeBlock) bool) int {
	t.Helper()
	blocks := readmeBlocks(t)
	// The Quick start stays exactly the two commands.
	if len(blocks) == 0 || blocks[0].section != "Quick start" || blocks[0].text != "make run\nmake test\n" {
		t.Fatalf("the README's first block must be the Quick start, exactly make run and make test: %+v", blocks[:min(1, len(blocks))])
	}
	// make run: bin/quire serve on 127.0.0.1:8080 with its data in ./data
	// (on a free port, which the blocks' 127.0.0.1:8080 is moved to).
	dir, listen := quiretest.MakeRun(t, quireCmd)
	ports := map[string]string{"127.0.0.1:8080": listen}
	portRE := regexp.MustCompile(`127\.0\.0\.1:(\d{4,5})`)
	moved := func(s string) string {
		return portRE.ReplaceAllStringFunc(s, func(m string) string {
			if p, ok := ports[m]; ok {
				return p
			}
			ports[m] = quiretest.FreeLoopbackAddr(t)
			return ports[m]
		})
	}

	ran := 0
	for _, b := range blocks[1:] {
		if b.lang != "sh" || !pick(b) {
			continue
		}
		ran++
		t.Run(fmt.Sprintf("%s (README.md:%d)", b.section, b.line), func(t *testing.T) {
			script := "set -euo pipefail\n" +
				// curl fails on a 4xx/5xx answer, printing it; -f in a
				// README line (wait loops) keeps its own meaning.
				"curl() { case \" $* \" in *\" -sf \"*|*\" -f \"*|*\" --fail \"*) command curl \"$@\";; *) command curl --fail-with-body \"$@\";; esac; }\n" +
				moved(b.text) + "\n"
			p := quiretest.StartProcessGroup(t, dir, script, b.section)
			select {
			case <-p.Done():
			case <-time.After(6 * time.Minute):
				t.Fatalf("the block did not finish in 6 minutes; output:\n%s", p.Output())
			}
			if p.Err() != nil {
				t.Fatalf("the block failed (%v); output:\n%s", p.Err(), p.Output())
			}
			t.Logf("output:\n%.3000s", p.Output())
		})
	}
	if left := notIgnored(t, dir); len(left) > 0 {
		t.Errorf("the README's blocks leave files that .gitignore does not cover (git add -A would commit them, keys included): %v", left)
	}
	return ran
}

// notIgnored lists the files under dir, as paths relative to it, that the
// repository's .gitignore would not ignore there. It knows the forms the
// file uses (/name, /name/, *.ext) and fails on any other, so a pattern
// it cannot read is never taken as a match.
func notIgnored(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	type pattern struct {
		name, ext string
		dirOnly   bool
	}
	var pats []pattern
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "*.") && !strings.ContainsAny(line[2:], "*?[/"):
			pats = append(pats, pattern{ext: line[1:]})
		case strings.HasPrefix(line, "/") && !strings.ContainsAny(line, "*?[!") && !strings.Contains(strings.Trim(line, "/"), "/"):
			pats = append(pats, pattern{name: strings.Trim(line, "/"), dirOnly: strings.HasSuffix(line, "/")})
		default:
			t.Fatalf(".gitignore: this test cannot read the pattern %q; teach notIgnored its form", line)
		}
	}
	ignored := func(rel string, isDir bool) bool {
		for _, p := range pats {
			if p.ext != "" && !isDir && strings.HasSuffix(rel, p.ext) {
				return true
			}
			if p.name != "" && rel == p.name && (isDir || !p.dirOnly) {
				return true
			}
		}
		return false
	}
	var left []string
	err = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if ignored(filepath.ToSlash(rel), d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}
