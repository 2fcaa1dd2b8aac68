package console

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"quire/console/internal/bundle"
)

// firstLoadBudget is the most the console may weigh, gzip-compressed, on
// its first load (issue 31: under 200 KB): index.html and every file it
// names (the style sheet, the bundle and the module kept out of it, the
// icon).
const firstLoadBudget = 200 << 10

// firstLoadFiles lists index.html and the console files it names.
func firstLoadFiles(t *testing.T) []string {
	a, ok := Lookup("index.html")
	if !ok {
		t.Fatal("no index.html")
	}
	out := []string{"index.html"}
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(a.Body), -1) {
		if _, ok := Lookup(m[1]); !ok {
			t.Errorf("index.html names %s, which is not a console file", m[1])
			continue
		}
		out = append(out, m[1])
	}
	return out
}

func TestBundle_SizeBudget(t *testing.T) {
	total, raw := 0, 0
	files := firstLoadFiles(t)
	for _, n := range files {
		a, _ := Lookup(n)
		total += len(a.Gzip)
		raw += len(a.Body)
	}
	if total > firstLoadBudget {
		t.Fatalf("the console's first load is %d bytes gzip-compressed (%d raw), over the budget of %d", total, raw, firstLoadBudget)
	}
	t.Logf("console first load: %d files %v, %d bytes raw, %d gzip", len(files), files, raw, total)
}

// TestBundle_EveryFileEmbedded: a file added to the folder but not to
// the go:embed line would be missing from the binary.
func TestBundle_EveryFileEmbedded(t *testing.T) {
	var onDisk []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".md") || strings.HasPrefix(p, "testdata") {
			return nil
		}
		onDisk = append(onDisk, filepath.ToSlash(p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(onDisk)
	if got := Names(); strings.Join(got, ",") != strings.Join(onDisk, ",") {
		t.Fatalf("embedded %v, on disk %v", got, onDisk)
	}
}

// TestIndex_LoadsTheBundle: index.html loads the modules as one bundle
// (issue 47's first-load goal: one script instead of 44 modules queued
// six at a time) and preloads the one module kept out of it, so the two
// are asked for at once, after the small script that sends the first
// request; it names no module of the source itself.
func TestIndex_LoadsTheBundle(t *testing.T) {
	a, ok := Lookup("index.html")
	if !ok {
		t.Fatal("no index.html")
	}
	html := string(a.Body)
	if !strings.Contains(html, `<script type="module" src="`+bundle.Name+`"></script>`) {
		t.Errorf("index.html does not load %s", bundle.Name)
	}
	if !strings.Contains(html, `<link rel="modulepreload" href="`+bundle.Own+`">`) {
		t.Errorf("index.html does not preload %s", bundle.Own)
	}
	var scripts []string
	for _, m := range regexp.MustCompile(`(?:src|href)="([^"]+\.js)"`).FindAllStringSubmatch(html, -1) {
		scripts = append(scripts, m[1])
	}
	if !strings.Contains(html, `<script src="js/boot.js" async></script>`) {
		t.Errorf("index.html does not send the first request at once (js/boot.js, async)")
	}
	if want := "js/boot.js," + bundle.Name + "," + bundle.Own; strings.Join(scripts, ",") != want {
		t.Errorf("index.html names the scripts %v, want %s", scripts, want)
	}
}

// TestBundle_UpToDate: the bundle index.html loads is what go generate
// ./console makes of the modules now (a module changed without running
// it would not reach the browser).
func TestBundle_UpToDate(t *testing.T) {
	want, err := bundle.Build(".")
	if err != nil {
		t.Fatal(err)
	}
	a, ok := Lookup(bundle.Name)
	if !ok {
		t.Fatalf("%s not embedded", bundle.Name)
	}
	if !bytes.Equal(a.Body, want) {
		t.Fatalf("%s is out of date with the modules: run go generate ./console", bundle.Name)
	}
	if bytes.Contains(want, []byte(`from "./`+bundle.Own+`"`)) == false {
		t.Errorf("the bundle does not import %s at its URL", bundle.Own)
	}
}

var (
	keyLine = regexp.MustCompile(`(?m)^\s*"([a-zA-Z0-9_.]+)":`)
	keyUse  = regexp.MustCompile(`\bt\("([a-zA-Z0-9_.]*[a-zA-Z0-9_])"|nav: "([a-zA-Z0-9_.]+)"`)
)

func keysOf(t *testing.T, name string) map[string]bool {
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s not embedded", name)
	}
	out := map[string]bool{}
	for _, m := range keyLine.FindAllStringSubmatch(string(a.Body), -1) {
		out[m[1]] = true
	}
	return out
}

var (
	valueLine   = regexp.MustCompile(`(?m)^\s*"([a-zA-Z0-9_.]+)": "((?:[^"\\]|\\.)*)",?\s*$`)
	placeholder = regexp.MustCompile(`\{\w+\}`)
)

// stringsOf maps each key of a language file to its text.
func stringsOf(t *testing.T, name string) map[string]string {
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s not embedded", name)
	}
	out := map[string]string{}
	for _, m := range valueLine.FindAllStringSubmatch(string(a.Body), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// placeholders lists a string's {placeholders}, sorted.
func placeholders(s string) string {
	p := placeholder.FindAllString(s, -1)
	sort.Strings(p)
	return strings.Join(p, " ")
}

// languagesOf lists the console's languages: every i18n/<lang>.js but
// the index.
func languagesOf() []string {
	var out []string
	for _, n := range Names() {
		if strings.HasPrefix(n, "i18n/") && n != "i18n/index.js" {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "i18n/"), ".js"))
		}
	}
	return out
}

// TestI18n_SameKeys: every language has every string, and every string
// the code asks for exists (a plural, t(key, {n}), as key.other at least).
func TestI18n_SameKeys(t *testing.T) {
	en := keysOf(t, "i18n/en.js")
	if len(en) < 50 {
		t.Fatalf("only %d English keys", len(en))
	}
	langs := languagesOf()
	if len(langs) < 2 {
		t.Fatalf("languages %v", langs)
	}
	for _, l := range langs {
		if l == "en" {
			continue
		}
		other := keysOf(t, "i18n/"+l+".js")
		for k := range en {
			if !other[k] {
				t.Errorf("%s.js lacks %q", l, k)
			}
		}
		enText, otherText := stringsOf(t, "i18n/en.js"), stringsOf(t, "i18n/"+l+".js")
		if len(enText) != len(en) || len(otherText) != len(other) {
			t.Fatalf("read %d of en.js's %d strings and %d of %s.js's %d", len(enText), len(en), len(otherText), l, len(other))
		}
		for k, v := range enText {
			if w, ok := otherText[k]; ok && placeholders(v) != placeholders(w) {
				t.Errorf("%s.js %q has the placeholders %s, en.js %s", l, k, placeholders(w), placeholders(v))
			}
		}
		for k := range other {
			if !en[k] {
				t.Errorf("%s.js has %q, which en.js lacks", l, k)
			}
		}
	}
	for _, n := range Names() {
		if !strings.HasSuffix(n, ".js") || strings.HasPrefix(n, "i18n/") || n == bundle.Name {
			continue // the bundle holds the languages' files (TestBundle_UpToDate checks it)
		}
		a, _ := Lookup(n)
		for _, m := range keyUse.FindAllStringSubmatch(string(a.Body), -1) {
			k := m[1] + m[2]
			if !en[k] && !en[k+".other"] {
				t.Errorf("%s uses %q, which en.js lacks", n, k)
			}
		}
	}
}

// literal finds the string literals of a module: "…" and `…` templates
// (of which the text before the first ${ counts: a key built there,
// `doc.${x}`).
var literal = regexp.MustCompile(`"((?:[^"\\\n]|\\.)*)"|` + "`((?:[^`\\\\]|\\\\.)*)`")

// pluralForm is the suffix of a plural's forms (t(key, {n}) picks one).
var pluralForm = regexp.MustCompile(`\.(zero|one|two|few|many|other)$`)

// TestI18n_EveryKeyUsed: every string of en.js is used by the console
// (the other languages hold en.js's keys, TestI18n_SameKeys): its key
// appears as a literal in a module or index.html (a plural's key without
// its .one/.other), or it starts with a literal ending in "." that the
// code completes (t("admin.intake.dup." + d), named("actiontype.", x),
// a template `doc.${x}`). A key nothing names is dead weight that every
// language has to translate.
func TestI18n_EveryKeyUsed(t *testing.T) {
	lits := map[string]bool{}
	var prefixes []string
	for _, n := range Names() {
		if !(strings.HasSuffix(n, ".js") || strings.HasSuffix(n, ".html")) || strings.HasPrefix(n, "i18n/") && n != "i18n/index.js" || n == bundle.Name {
			continue // the bundle holds the languages' files (TestBundle_UpToDate checks it)
		}
		a, _ := Lookup(n)
		for _, m := range literal.FindAllStringSubmatch(string(a.Body), -1) {
			l := m[1]
			if m[0][0] == '`' {
				l, _, _ = strings.Cut(m[2], "${")
			}
			lits[l] = true
			if strings.HasSuffix(l, ".") && strings.Contains(l[:len(l)-1], ".") || strings.HasSuffix(l, ".") && len(l) > 3 {
				prefixes = append(prefixes, l)
			}
		}
	}
	var unused []string
	for k := range keysOf(t, "i18n/en.js") {
		base := pluralForm.ReplaceAllString(k, "")
		if lits[k] || lits[base] {
			continue
		}
		used := false
		for _, p := range prefixes {
			if strings.HasPrefix(k, p) {
				used = true
				break
			}
		}
		if !used {
			unused = append(unused, k)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("%d strings of en.js no module uses (remove them from every language):\n%s", len(unused), strings.Join(unused, "\n"))
	}
}

// TestI18n_OneWordPerThing: the words people stumbled over on the walk
// (issue 47) stay out: German calls a site "Bereich" everywhere, never
// "Mandant"; no string shows an API status code or enum name.
func TestI18n_OneWordPerThing(t *testing.T) {
	for _, l := range languagesOf() {
		a, _ := Lookup("i18n/" + l + ".js")
		for _, bad := range []string{"Mandant", "({status})", "FORCE_CHANGE_PASSWORD", "CONFIRMED", "UPDATE_VERSION"} {
			for _, line := range strings.Split(string(a.Body), "\n") {
				if i := strings.Index(line, "\": "); i > 0 && strings.Contains(line[i:], bad) {
					t.Errorf("%s.js: %s", l, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestNoInlineScriptOrStyle: the CSP forbids inline script and style, so
// none may be in the pages (it would be refused in the browser).
func TestNoInlineScriptOrStyle(t *testing.T) {
	a, _ := Lookup("index.html")
	html := string(a.Body)
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script(?:[^>]*)>\s*[^<\s]`), regexp.MustCompile(`<style`), regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`\son[a-z]+=`)} {
		if bad.MatchString(html) {
			t.Errorf("index.html has inline code: %s", bad)
		}
	}
	for _, n := range Names() {
		if !strings.HasSuffix(n, ".js") {
			continue
		}
		b, _ := Lookup(n)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "new Function", "localStorage.setItem(\"quire.token", ".style."} {
			if strings.Contains(string(b.Body), bad) {
				t.Errorf("%s uses %s", n, bad)
			}
		}
	}
	if !strings.Contains(CSP, "script-src 'self'") || strings.Contains(CSP, "unsafe") {
		t.Errorf("CSP %q", CSP)
	}
}
