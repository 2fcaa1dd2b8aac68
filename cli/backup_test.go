package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
)

type savedDoc struct {
	id, path string
	content  []byte
	tag      string
	number   float64
}

// createDoc creates a document over HTTP without failing the test from a
// writer goroutine.
func createDoc(c *http.Client, base, tok string, d *savedDoc) error {
	body, _ := json.Marshal(map[string]any{
		"path": d.path, "contentType": "application/octet-stream", "isBase64": true, "content": d.content,
		"tags":       []map[string]any{{"key": "batch", "value": d.tag}},
		"attributes": []map[string]any{{"key": "amount", "numberValue": d.number}},
	})
	req, _ := http.NewRequest(http.MethodPost, base+"/documents", bytes.NewReader(body))
	req.Header.Set("Authorization", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("create %s: %d %s", d.path, resp.StatusCode, b)
	}
	var out struct{ DocumentID string }
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	d.id = out.DocumentID
	return nil
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// TestBackup_WhileWriting fills a server, backs it up online while clients
// keep writing, restores the archive into a new data dir and checks every
// document acknowledged before the backup started: content, tags,
// attributes, search. It also backs up offline, to stdout, and refuses
// damaged archives.
func TestBackup_WhileWriting(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	if r := s.Do(http.MethodPost, "/attributes", map[string]any{"attribute": map[string]any{"key": "amount", "dataType": "NUMBER"}}, tok); r.Status != http.StatusCreated {
		t.Fatalf("attribute: %d %s", r.Status, r.Body)
	}
	var before []*savedDoc
	for i := 0; i < 60; i++ {
		size := 2000 + i*37
		if i%20 == 0 {
			size = 3<<20 + i // several content chunks
		}
		d := &savedDoc{path: fmt.Sprintf("before/doc-%03d.bin", i), content: randomBytes(size), tag: "before", number: float64(i)}
		if err := createDoc(s.Client, s.URL, tok, d); err != nil {
			t.Fatal(err)
		}
		before = append(before, d)
	}

	// Writers keep creating documents during the backup (bounded).
	var (
		wg      sync.WaitGroup
		stop    atomic.Bool
		mu      sync.Mutex
		during  []*savedDoc
		errs    []error
		created atomic.Int64
	)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 400 && !stop.Load(); i++ {
				d := &savedDoc{path: fmt.Sprintf("during/w%d-%03d.bin", w, i), content: randomBytes(50_000), tag: "during", number: float64(i)}
				err := createDoc(s.Client, s.URL, tok, d)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					during = append(during, d)
				}
				mu.Unlock()
				created.Add(1)
			}
		}()
	}
	// The backup starts once the writers are under way.
	for deadline := time.Now().Add(30 * time.Second); created.Load() < 5; {
		if time.Now().After(deadline) {
			stop.Store(true)
			t.Fatalf("writers made %d requests in 30s, want 5 before the backup", created.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	archive := filepath.Join(t.TempDir(), "online.qbk")
	var out, errb bytes.Buffer
	if code := Main([]string{"backup", "--url", s.URL, "--token", tok, "--out", archive}, &out, &errb); code != 0 {
		t.Fatalf("online backup: code %d: %s", code, errb.String())
	}
	stop.Store(true)
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("writers failed during the backup: %v", errs[0])
	}
	if !strings.Contains(errb.String(), "backup complete") {
		t.Fatalf("backup output: %s", errb.String())
	}
	if _, err := os.Stat(archive + ".partial"); !os.IsNotExist(err) {
		t.Fatal("a .partial file was left behind")
	}

	// Not everyone may take a backup.
	if r := s.Do(http.MethodGet, "/system/backup", nil, s.Token("ann", "default")); r.Status != http.StatusUnauthorized {
		t.Fatalf("backup by a non-admin: %d", r.Status)
	}
	if r := s.Do(http.MethodGet, "/system/backup", nil, ""); r.Status != http.StatusUnauthorized {
		t.Fatalf("backup without a token: %d", r.Status)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	errb.Reset()
	if code := Main([]string{"restore", "--in", archive, "--data-dir", restored}, &out, &errb); code != 0 {
		t.Fatalf("restore: code %d: %s", code, errb.String())
	}
	if errb.Len() == 0 || !strings.Contains(errb.String(), "restored") {
		t.Fatalf("restore output: %s", errb.String())
	}
	// Restoring over existing data is refused.
	if code := Main([]string{"restore", "--in", archive, "--data-dir", restored}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not empty") ||
		!strings.Contains(errb.String(), "nothing in it was changed") || strings.Contains(errb.String(), "left empty") {
		t.Fatalf("restore into a used data dir: code %d: %s", code, errb.String())
	}
	s.Close()

	r2 := quiretest.StartServer(t, restored)
	// The signing keys came along: the old token still works.
	checkDocs(t, r2, tok, before, true)
	// Documents written during the backup are either wholly there or absent.
	mu.Lock()
	checkDocs(t, r2, tok, during, false)
	mu.Unlock()
	r2.Close()

	// Offline backup of the stopped original, to stdout, restored from it.
	var stdout bytes.Buffer
	errb.Reset()
	if code := Main([]string{"backup", "--data-dir", dir, "--out", "-"}, &stdout, &errb); code != 0 {
		t.Fatalf("offline backup: code %d: %s", code, errb.String())
	}
	offline := filepath.Join(t.TempDir(), "offline.qbk")
	os.WriteFile(offline, stdout.Bytes(), 0o600)
	restored2 := filepath.Join(t.TempDir(), "restored2")
	if code := Main([]string{"restore", "--in", offline, "--data-dir", restored2}, &out, &errb); code != 0 {
		t.Fatalf("restore offline archive: code %d: %s", code, errb.String())
	}
	r3 := quiretest.StartServer(t, restored2)
	checkDocs(t, r3, tok, append(before, during...), true)
	r3.Close()

	// Damaged archives are refused and leave nothing behind.
	full := stdout.Bytes()
	flipped := bytes.Clone(full)
	flipped[len(flipped)/2] ^= 0xff
	for name, b := range map[string][]byte{
		"truncated":     full[:len(full)/2],
		"no end frame":  full[:len(full)-100],
		"flipped byte":  flipped,
		"not an archve": []byte("hello"),
	} {
		path := filepath.Join(t.TempDir(), "bad.qbk")
		os.WriteFile(path, b, 0o600)
		target := filepath.Join(t.TempDir(), "bad")
		errb.Reset()
		if code := Main([]string{"restore", "--in", path, "--data-dir", target}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "damaged or incomplete") {
			t.Fatalf("%s: restore code %d: %s", name, code, errb.String())
		}
		if entries, _ := os.ReadDir(target); len(entries) != 0 {
			t.Fatalf("%s: a failed restore left %d entries", name, len(entries))
		}
	}
}

// checkDocs reads each document back from a restored server. must says
// every one must be there; otherwise a present one must be whole.
func checkDocs(t *testing.T, s *quiretest.Server, tok string, docs []*savedDoc, must bool) {
	t.Helper()
	present := 0
	for _, d := range docs {
		r := s.Do(http.MethodGet, "/documents/"+d.id, nil, tok)
		if r.Status == http.StatusNotFound && !must {
			continue
		}
		if r.Status != http.StatusOK || r.JSON(t)["path"] != d.path {
			t.Fatalf("document %s (%s): %d %s", d.id, d.path, r.Status, r.Body)
		}
		present++
		c := s.Do(http.MethodGet, "/documents/"+d.id+"/content", nil, tok)
		if u, ok := c.JSON(t)["contentUrl"].(string); ok {
			// Binary content is served through a signed download URL.
			c = s.Do(http.MethodGet, strings.TrimPrefix(u, s.URL), nil, "")
		}
		if !bytes.Equal(c.Body, d.content) {
			t.Fatalf("content of %s: %d bytes, want %d: %.300s", d.path, len(c.Body), len(d.content), c.Body)
		}
		tags := s.Do(http.MethodGet, "/documents/"+d.id+"/tags", nil, tok)
		if !strings.Contains(string(tags.Body), `"value":"`+d.tag+`"`) {
			t.Fatalf("tags of %s: %s", d.path, tags.Body)
		}
		at := s.Do(http.MethodGet, "/documents/"+d.id+"/attributes/amount", nil, tok)
		if !strings.Contains(string(at.Body), fmt.Sprintf(`"numberValue":%g`, d.number)) {
			t.Fatalf("attribute of %s: %s", d.path, at.Body)
		}
	}
	if !must {
		t.Logf("%d of %d documents written during the backup are in it", present, len(docs))
		return
	}
	// The index was rebuilt from the restored store: tag and filename
	// searches find every document.
	byTag := map[string]int{}
	for _, d := range docs {
		byTag[d.tag]++
	}
	tags := make([]string, 0, len(byTag))
	for k := range byTag {
		tags = append(tags, k)
	}
	sort.Strings(tags)
	for _, tag := range tags {
		n, next := 0, ""
		for page := 0; page < 100; page++ {
			r := s.Do(http.MethodPost, "/search?limit=100"+next, map[string]any{"query": map[string]any{"tag": map[string]any{"key": "batch", "eq": tag}}}, tok)
			m := r.JSON(t)
			n += len(quiretest.List(t, m, "documents"))
			nx, _ := m["next"].(string)
			if nx == "" {
				break
			}
			next = "&next=" + nx
		}
		if n != byTag[tag] {
			t.Fatalf("search tag %s after restore: %d documents, want %d", tag, n, byTag[tag])
		}
	}
	r := s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "doc-00"}}}, tok)
	if got := len(quiretest.List(t, r.JSON(t), "documents")); got != 10 {
		t.Fatalf("filename search after restore: %d documents, want 10", got)
	}
}
