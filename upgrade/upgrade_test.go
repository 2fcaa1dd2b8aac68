package upgrade_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/quiretest"
	"quire/upgrade"
)

func TestMain(m *testing.M) {
	code := m.Run()
	quiretest.RemoveQuireBinary()
	os.Exit(code)
}

// buildCurrent is this tree's quire binary as make build ships it
// (quiretest.QuireBinary: built once per source tree and reused while the
// tree is unchanged, by the other packages that run quire too; the
// version it reports is the tree's default, which no test here reads).
func buildCurrent(t *testing.T) string {
	t.Helper()
	return quiretest.QuireBinary(t)
}

func readManifest(t *testing.T) *upgrade.Manifest {
	t.Helper()
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m upgrade.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Documents) < 3 || len(m.Users) == 0 || m.APIKey == "" || len(m.Webhooks) == 0 || len(m.Secrets) == 0 || m.Backup == "" {
		t.Fatalf("the manifest lacks what the old release wrote: %+v", m)
	}
	return &m
}

// extract unpacks the fixture into a new directory and returns it: the
// old release's data dir is data/ in it, its backup m.Backup.
func extract(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open("testdata/fixture.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("fixture entry %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, os.FileMode(h.Mode)&0o700|0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "db", "MANIFEST")); err != nil {
		t.Fatalf("the fixture holds no store: %v", err)
	}
	return dir
}

// server is a quire serve process of the current build.
type server struct {
	base string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func (s *server) logText() string {
	b, _ := os.ReadFile(s.log)
	return string(b)
}

// stop ends the server with SIGTERM, as systemd does, and waits.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		s.cmd.Process.Kill()
		<-s.done
		t.Fatalf("the server did not stop in a minute on SIGTERM:\n%s", tail(s.logText()))
	}
}

func startServer(t *testing.T, bin, dataDir string) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{base: "http://" + addr, log: filepath.Join(t.TempDir(), "serve.log"), done: make(chan struct{})}
	f, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s.cmd = exec.Command(bin, "serve", "--listen", addr, "--data-dir", dataDir, "--public-url", s.base)
	s.cmd.Stdout, s.cmd.Stderr = f, f
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		<-s.done
		if t.Failed() {
			t.Logf("server log (tail):\n%s", tail(s.logText()))
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if resp, err := http.Get(s.base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("the current build exited on the old data dir: %v\n%s", s.err, tail(s.logText()))
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready in 2 minutes:\n%s", tail(s.logText()))
		}
	}
}

func tail(s string) string {
	if len(s) > 6000 {
		return s[len(s)-6000:]
	}
	return s
}

// adminToken is a token of the current build's `quire token` on dataDir
// (the old release's signing key).
func adminToken(t *testing.T, bin, dataDir string) string {
	t.Helper()
	out, err := exec.Command(bin, "token", "--data-dir", dataDir, "--user", "admin", "--groups", "Admins").Output()
	if err != nil {
		t.Fatalf("quire token on the old data dir: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// api calls the server and decodes a JSON answer; it fails t unless the
// status is want.
func api(t *testing.T, c *upgrade.Client, method, path, tok string, body any, want int) map[string]any {
	t.Helper()
	st, b, err := c.Do(method, path, body, tok)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if st != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, st, b, want)
	}
	m := map[string]any{}
	if len(b) > 0 && json.Unmarshal(b, &m) != nil {
		t.Fatalf("%s %s: not a JSON object: %s", method, path, b)
	}
	return m
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func items(m map[string]any, k string) []map[string]any {
	l, _ := m[k].([]any)
	var out []map[string]any
	for _, x := range l {
		if o, ok := x.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}

func siteQuery(site string) string {
	if site == "" || site == "default" {
		return ""
	}
	return "siteId=" + site
}

func withQuery(path string, qs ...string) string {
	var parts []string
	for _, q := range qs {
		if q != "" {
			parts = append(parts, q)
		}
	}
	if len(parts) == 0 {
		return path
	}
	return path + "?" + strings.Join(parts, "&")
}

// hasDoc says whether a search answer lists document id.
func hasDoc(m map[string]any, id string) bool {
	for _, d := range items(m, "documents") {
		if str(d, "documentId") == id {
			return true
		}
	}
	return false
}

var accessTokenRE = regexp.MustCompile(`"AccessToken"\s*:\s*"([^"]+)"`)

// verify checks over HTTP that everything the old release wrote (m) is
// served by the current build at base.
func verify(t *testing.T, base, tok string, m *upgrade.Manifest) {
	c := &upgrade.Client{Base: base, HTTP: &http.Client{Timeout: time.Minute}}
	for _, d := range m.Documents {
		t.Run("document "+d.Path, func(t *testing.T) {
			sq := siteQuery(d.Site)
			rec := api(t, c, "GET", withQuery("/documents/"+d.ID, sq), tok, nil, http.StatusOK)
			if str(rec, "path") != d.Path {
				t.Errorf("path %q, want %q", str(rec, "path"), d.Path)
			}
			if d.Size == 0 {
				got := api(t, c, "GET", withQuery("/documents/"+d.ID+"/content", sq), tok, nil, http.StatusOK)
				if str(got, "content") != d.Content {
					t.Errorf("content %q, want %q", str(got, "content"), d.Content)
				}
			} else {
				u := str(api(t, c, "GET", withQuery("/documents/"+d.ID+"/url", sq), tok, nil, http.StatusOK), "url")
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.New()
				n, err := io.Copy(h, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || n != d.Size || hex.EncodeToString(h.Sum(nil)) != d.SHA256 {
					t.Errorf("download: %s, %d bytes (%v), sha256 %x; want %d bytes, %s", resp.Status, n, err, h.Sum(nil), d.Size, d.SHA256)
				}
			}
			vs := items(api(t, c, "GET", withQuery("/documents/"+d.ID+"/versions", sq), tok, nil, http.StatusOK), "documents")
			if len(vs) != d.Versions {
				t.Errorf("%d versions, want %d: %v", len(vs), d.Versions, vs)
			} else if d.OldContent != "" {
				k := str(vs[len(vs)-1], "versionKey")
				got := api(t, c, "GET", withQuery("/documents/"+d.ID+"/content", sq, "versionKey="+k), tok, nil, http.StatusOK)
				if str(got, "content") != d.OldContent {
					t.Errorf("first version's content %q, want %q", str(got, "content"), d.OldContent)
				}
			}
			if len(d.Tags) > 0 {
				tags := map[string]string{}
				for _, tg := range items(api(t, c, "GET", withQuery("/documents/"+d.ID+"/tags", sq), tok, nil, http.StatusOK), "tags") {
					tags[str(tg, "key")] = str(tg, "value")
				}
				for k, v := range d.Tags {
					if tags[k] != v {
						t.Errorf("tag %s = %q, want %q (%v)", k, tags[k], v, tags)
					}
					s := api(t, c, "POST", withQuery("/search", sq), tok, map[string]any{"query": map[string]any{"tag": map[string]any{"key": k, "eq": v}}}, http.StatusOK)
					if !hasDoc(s, d.ID) {
						t.Errorf("search by tag %s=%s does not find it: %v", k, v, s)
					}
				}
			}
			for k, want := range d.Attributes {
				a, _ := api(t, c, "GET", withQuery("/documents/"+d.ID+"/attributes/"+k, sq), tok, nil, http.StatusOK)["attribute"].(map[string]any)
				var got string
				for _, f := range []string{"stringValue", "numberValue", "booleanValue"} {
					if v, ok := a[f]; ok {
						got = fmt.Sprint(v)
					}
				}
				if got != want {
					t.Errorf("attribute %s = %q, want %q (%v)", k, got, want, a)
				}
				if m.Attributes[k] == "STRING" {
					s := api(t, c, "POST", withQuery("/search", sq), tok, map[string]any{"query": map[string]any{"attribute": map[string]any{"key": k, "eq": want}}}, http.StatusOK)
					if !hasDoc(s, d.ID) {
						t.Errorf("search by attribute %s=%s does not find it: %v", k, want, s)
					}
				}
			}
			if d.Word != "" {
				// The index may still be catching up (a restored data dir
				// rebuilds it): asked until a deadline.
				deadline := time.Now().Add(time.Minute)
				for {
					s := api(t, c, "POST", withQuery("/searchFulltext", sq), tok, map[string]any{"query": map[string]any{"text": d.Word}}, http.StatusOK)
					if hasDoc(s, d.ID) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("fulltext search for %q does not find it in a minute: %v", d.Word, s)
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		})
	}
	t.Run("attribute definitions", func(t *testing.T) {
		for k, typ := range m.Attributes {
			a, _ := api(t, c, "GET", "/attributes/"+k, tok, nil, http.StatusOK)["attribute"].(map[string]any)
			if str(a, "dataType") != typ {
				t.Errorf("attribute %s: %v, want dataType %s", k, a, typ)
			}
		}
	})
	t.Run("users sign in with their own password", func(t *testing.T) {
		for _, u := range m.Users {
			st, b, err := c.Do("POST", "/login", map[string]any{"username": u.Name, "password": u.Password}, "")
			mm := accessTokenRE.FindSubmatch(b)
			if err != nil || st != http.StatusOK || mm == nil {
				t.Fatalf("login %s: %d %s %v", u.Name, st, b, err)
			}
			l := api(t, c, "GET", withQuery("/documents", siteQuery(u.Site)), string(mm[1]), nil, http.StatusOK)
			found := false
			for _, d := range m.Documents {
				found = found || d.Site == u.Site && hasDoc(l, d.ID)
			}
			if !found {
				t.Errorf("%s's documents of site %s: %v", u.Name, u.Site, l)
			}
			if st, _, _ := c.Do("POST", "/login", map[string]any{"username": u.Name, "password": u.Password + "x"}, ""); st == http.StatusOK {
				t.Errorf("login %s with a wrong password: %d", u.Name, st)
			}
		}
	})
	t.Run("API key", func(t *testing.T) {
		d := m.Documents[0]
		api(t, c, "GET", "/documents/"+d.ID, m.APIKey, nil, http.StatusOK)
		found := false
		for _, k := range items(api(t, c, "GET", "/sites/default/apiKeys", tok, nil, http.StatusOK), "apiKeys") {
			found = found || str(k, "name") == m.APIKeyName
		}
		if !found {
			t.Errorf("GET /sites/default/apiKeys does not list %q", m.APIKeyName)
		}
	})
	t.Run("webhooks", func(t *testing.T) {
		for id, name := range m.Webhooks {
			w := api(t, c, "GET", "/webhooks/"+id, tok, nil, http.StatusOK)
			if !strings.Contains(fmt.Sprint(w), name) {
				t.Errorf("webhook %s: %v, want name %s", id, w, name)
			}
		}
	})
	t.Run("secrets", func(t *testing.T) {
		l := api(t, c, "GET", "/sites/default/secrets", tok, nil, http.StatusOK)
		got := map[string]string{}
		for _, s := range items(l, "secrets") {
			got[str(s, "alias")] = str(s, "fingerprint")
		}
		for alias, fp := range m.Secrets {
			if got[alias] != fp {
				t.Errorf("secret %s: fingerprint %q, want %q (%v)", alias, got[alias], fp, l)
			}
		}
	})
	t.Run("new writes", func(t *testing.T) {
		d := api(t, c, "POST", "/documents", tok, map[string]any{"path": "after/upgrade.txt", "contentType": "text/plain", "content": "written after the upgrade, marmotquill"}, http.StatusCreated)
		id := str(d, "documentId")
		deadline := time.Now().Add(time.Minute)
		for !hasDoc(api(t, c, "POST", "/searchFulltext", tok, map[string]any{"query": map[string]any{"text": "marmotquill"}}, http.StatusOK), id) {
			if time.Now().After(deadline) {
				t.Fatal("a document written after the upgrade is not found in a minute")
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// TestUpgrade_OldDataDir starts the current build on a data dir the
// pinned older release wrote (its store, search index, keys and secrets
// key as it left them) and finds everything over HTTP; the store is
// marked with the current format, and a second start is quiet about it.
func TestUpgrade_OldDataDir(t *testing.T) {
	m := readManifest(t)
	bin := buildCurrent(t)
	dir := extract(t)
	data := filepath.Join(dir, "data")
	if _, err := os.Stat(filepath.Join(data, "db", "FORMAT")); err == nil {
		t.Fatal("the fixture's store already has a format marker: it is not the old layout")
	}
	s := startServer(t, bin, data)
	verify(t, s.base, adminToken(t, bin, data), m)
	s.stop(t)
	if log := s.logText(); !strings.Contains(log, "store format: the store has no format marker") {
		t.Errorf("the log does not say the store was found without a format marker:\n%s", tail(log))
	}
	if b, err := os.ReadFile(filepath.Join(data, "db", "FORMAT")); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Fatalf("db/FORMAT after the upgrade: %q %v, want 1", b, err)
	}
	s = startServer(t, bin, data)
	verify(t, s.base, adminToken(t, bin, data), m)
	s.stop(t)
	if strings.Contains(s.logText(), "no format marker") {
		t.Error("the second start still found no format marker")
	}
}

// TestUpgrade_OldBackupRestores restores the backup the older release
// made while it served into a new data dir with the current build's
// `quire restore`; the current build serves it all, its index rebuilt
// from the store at the first start with progress in the log.
func TestUpgrade_OldBackupRestores(t *testing.T) {
	m := readManifest(t)
	bin := buildCurrent(t)
	dir := extract(t)
	data := filepath.Join(t.TempDir(), "restored")
	out, err := exec.Command(bin, "restore", "--in", filepath.Join(dir, m.Backup), "--data-dir", data).CombinedOutput()
	if err != nil {
		t.Fatalf("quire restore of the old backup: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(data, "db", "FORMAT")); err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Fatalf("db/FORMAT of the restored store: %q %v, want 1 (the old backup's)", b, err)
	}
	s := startServer(t, bin, data)
	verify(t, s.base, adminToken(t, bin, data), m)
	s.stop(t)
	if log := s.logText(); !regexp.MustCompile(`msg="index caught up" component=index documents=[1-9]`).MatchString(log) {
		t.Errorf("the log does not show the index rebuilt from the restored store:\n%s", tail(log))
	}
}

// TestUpgrade_IndexFormatChangeRebuilds: an index of another format (as
// a release that changes the index layout finds the old one) is rebuilt
// from the store by itself at start, saying so in the log, and search
// finds everything again.
func TestUpgrade_IndexFormatChangeRebuilds(t *testing.T) {
	m := readManifest(t)
	bin := buildCurrent(t)
	data := filepath.Join(extract(t), "data")
	if err := os.WriteFile(filepath.Join(data, "index", "FORMAT"), []byte("4\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, bin, data)
	verify(t, s.base, adminToken(t, bin, data), m)
	s.stop(t)
	log := s.logText()
	for _, want := range []string{`msg="index format changed: rebuilding it from storage" component=index from=4`, `msg="index caught up" component=index documents=`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, tail(log))
		}
	}
}

// snapshot is every file of dir with its size, mode, time and SHA-256.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUpgrade_NewerStoreFormatRefused: a data dir whose store a newer
// release wrote (a format marker above this build's) is refused by serve
// and by every command that opens the store, with a message naming the
// formats and exit status 3, and not one file of it changes.
func TestUpgrade_NewerStoreFormatRefused(t *testing.T) {
	bin := buildCurrent(t)
	data := filepath.Join(extract(t), "data")
	if err := os.WriteFile(filepath.Join(data, "db", "FORMAT"), []byte("999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, data)
	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0", "--data-dir", data},
		{"backup", "--data-dir", data, "--out", filepath.Join(t.TempDir(), "b.quire")},
		{"reindex", "--data-dir", data},
	} {
		t.Run(args[0], func(t *testing.T) {
			// A build that opened the store would serve: it is stopped
			// after a minute, and fails the test.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("quire %s on a newer store: %v, want exit status 3\n%s", args[0], err, out)
			}
			if !strings.Contains(string(out), "is format 999, written by a newer release of Quire; this release reads format 1 at most") ||
				!strings.Contains(string(out), "left untouched") {
				t.Fatalf("quire %s's message:\n%s", args[0], out)
			}
		})
	}
	// systemd does not restart a service refused so.
	if unit, err := os.ReadFile("../systemd/quire.service"); err != nil || !strings.Contains(string(unit), "\nRestartPreventExitStatus=3\n") {
		t.Errorf("systemd/quire.service lacks RestartPreventExitStatus=3 (%v)", err)
	}
	after := snapshot(t, data)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s changed: %s -> %s", p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was created", p)
		}
	}
	// quire doctor names the problem (it probes the data dir's
	// writability, so it runs after the comparison).
	out, _ := exec.Command(bin, "doctor", "--data-dir", data).CombinedOutput()
	if !strings.Contains(string(out), "written by a newer release of Quire") {
		t.Errorf("quire doctor on a newer store:\n%s", out)
	}
}

// TestUpgrade_NewerBackupRefused: a backup of a store of a newer format
// is refused by restore, which leaves no data dir behind.
func TestUpgrade_NewerBackupRefused(t *testing.T) {
	m := readManifest(t)
	bin := buildCurrent(t)
	dir := extract(t)
	// The old archive's header, rewritten to name a newer store format.
	b, err := os.ReadFile(filepath.Join(dir, m.Backup))
	if err != nil {
		t.Fatal(err)
	}
	hdrLen := int(b[9])<<24 | int(b[10])<<16 | int(b[11])<<8 | int(b[12])
	if string(b[:8]) != "QUIREBK1" || b[8] != 'H' || 13+hdrLen > len(b) {
		t.Fatalf("the old backup does not start with a header frame: %q", b[:min(len(b), 40)])
	}
	var h map[string]any
	if err := json.Unmarshal(b[13:13+hdrLen], &h); err != nil {
		t.Fatal(err)
	}
	h["storeFormat"] = 999
	nh, _ := json.Marshal(h)
	nb := append(append(append([]byte{}, b[:9]...), byte(len(nh)>>24), byte(len(nh)>>16), byte(len(nh)>>8), byte(len(nh))), nh...)
	nb = append(nb, b[13+hdrLen:]...)
	in := filepath.Join(t.TempDir(), "newer.quire")
	if err := os.WriteFile(in, nb, 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "restored")
	out, err := exec.Command(bin, "restore", "--in", in, "--data-dir", data).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "holds a store of format 999") {
		t.Fatalf("restore of a newer store's backup: %v\n%s", err, out)
	}
	if ents, _ := os.ReadDir(data); len(ents) > 0 {
		t.Fatalf("the refused restore left %d entries in %s", len(ents), data)
	}
}

func client(base string) *upgrade.Client {
	return &upgrade.Client{Base: base, HTTP: &http.Client{Timeout: time.Minute}}
}

// TestUpgrade_FixtureIsOfThePinnedCommit: the fixture was made from the
// commit the Makefile pins (UPGRADE_FROM), by a binary of that commit,
// and it stays small.
func TestUpgrade_FixtureIsOfThePinnedCommit(t *testing.T) {
	m := readManifest(t)
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`(?m)^UPGRADE_FROM := ([0-9a-f]{40})$`).FindSubmatch(mk)
	if pin == nil {
		t.Fatal("the Makefile pins no UPGRADE_FROM commit")
	}
	if m.Commit != string(pin[1]) || m.OldVersion != "git-"+string(pin[1][:12]) {
		t.Fatalf("the fixture was made from %s (%s), the Makefile pins %s: run make upgrade-fixture", m.Commit, m.OldVersion, pin[1])
	}
	if fi, err := os.Stat("testdata/fixture.tar.gz"); err != nil || fi.Size() > 512<<10 {
		t.Fatalf("testdata/fixture.tar.gz: %v, want under 512 KiB", err)
	}
}
