package content_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// faultOutcome is what a client saw of one write.
type faultOutcome struct {
	id     string
	data   []byte
	status int
	msg    string
}

// TestDiskFault_IOErrorNeverAcknowledged makes the Nth commit of one kind
// (a document record, an upload's chunks, an upload's commit) fail with
// EIO, as a failing disk would, while several clients write. No write
// whose data hit the error gets a 2xx: it gets 503 "storage failed: ...",
// its document or content is not visible, every later write gets 503 too
// (the node stays read-only until a restart), and reads go on.
func TestDiskFault_IOErrorNeverAcknowledged(t *testing.T) {
	tests := []struct {
		name   string
		op     storage.Op
		upload bool
	}{
		{"inline document record", storage.OpAddDocuments, false},
		{"upload chunks", storage.OpPutChunks, true},
		{"upload commit", storage.OpCommitContent, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := quiretest.NewServer(t)
			admin := s.Admin()
			var n atomic.Int32
			s.Node.DB.SetCommitFault(func(c *storage.Command) error {
				if c.Op == tt.op && n.Add(1) == 4 {
					return fmt.Errorf("write 000001.vlog: %w", syscall.EIO)
				}
				return nil
			})
			var mu sync.Mutex
			var outs []faultOutcome
			var wg sync.WaitGroup
			client := &http.Client{}
			for w := 0; w < 3; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rnd := rand.New(rand.NewSource(int64(w)))
					for i := 0; i < 5; i++ {
						size := 100 + rnd.Intn(4000)
						if tt.upload {
							size = 1<<20 + rnd.Intn(2<<20) // several chunks
						}
						data := make([]byte, size)
						rnd.Read(data)
						o := faultWrite(client, s, admin, data, tt.upload)
						mu.Lock()
						outs = append(outs, o)
						mu.Unlock()
					}
				}(w)
			}
			wg.Wait()

			failed := 0
			for _, o := range outs {
				switch {
				case o.status == http.StatusOK || o.status == http.StatusCreated:
					got := fetchContent(t, s, admin, o.id)
					if !bytes.Equal(got, o.data) {
						t.Errorf("acknowledged document %s: content differs (%d bytes, want %d)", o.id, len(got), len(o.data))
					}
				case o.status == http.StatusServiceUnavailable && strings.HasPrefix(o.msg, "storage failed: "):
					failed++
					if o.id == "" {
						continue
					}
					// Nothing of the failed write is visible: no record
					// (inline), or no content (upload).
					r := s.Do(http.MethodGet, "/documents/"+o.id, nil, admin)
					if !tt.upload && r.Status != http.StatusNotFound {
						t.Errorf("document of a failed write %s: %d %s", o.id, r.Status, r.Body)
					}
					if tt.upload && bytes.Contains(r.Body, []byte(`"contentLength"`)) {
						t.Errorf("upload of a failed write %s has content: %s", o.id, r.Body)
					}
				default:
					t.Errorf("write got %d %q, want a 2xx or 503 storage failed", o.status, o.msg)
				}
			}
			if failed == 0 {
				t.Fatalf("no write failed: the fault was not hit (%d writes)", len(outs))
			}

			// The node stays read-only: writes get 503, reads work.
			r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "later"}, admin)
			if r.Status != http.StatusServiceUnavailable || !strings.Contains(string(r.Body), "storage failed: ") {
				t.Errorf("write after the I/O error: %d %s", r.Status, r.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?limit=100", nil, admin), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"text": "x"}}, admin), http.StatusOK)
			ready := s.Do(http.MethodGet, "/readyz", nil, "")
			if ready.Status != http.StatusOK || !strings.Contains(string(ready.Body), `"kind":"io-error"`) {
				t.Errorf("/readyz after the I/O error: %d %s", ready.Status, ready.Body)
			}
			if m := s.Do(http.MethodGet, "/metrics", nil, ""); !strings.Contains(string(m.Body), `quire_storage_write_refused{kind="io-error"} 1`) {
				t.Error("/metrics does not report the io-error refusal")
			}
		})
	}
}

// faultWrite creates a document with data inline or through an upload URL.
func faultWrite(c *http.Client, s *quiretest.Server, tok string, data []byte, upload bool) faultOutcome {
	o := faultOutcome{data: data}
	path, body := "/documents", map[string]any{"content": data, "isBase64": true}
	if upload {
		path, body = "/documents/upload", map[string]any{}
	}
	b, _ := json.Marshal(body)
	st, rb := faultDo(c, http.MethodPost, s.URL+path, tok, b)
	var r struct {
		DocumentID string
		URL        string
		Message    string
	}
	json.Unmarshal(rb, &r)
	o.id, o.status, o.msg = r.DocumentID, st, r.Message
	if !upload || st != http.StatusCreated {
		return o
	}
	st, rb = faultDo(c, http.MethodPut, r.URL, "", data)
	json.Unmarshal(rb, &r)
	o.status, o.msg = st, r.Message
	return o
}

func faultDo(c *http.Client, method, url, tok string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, []byte(err.Error())
	}
	if tok != "" {
		req.Header.Set("Authorization", tok)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// fetchContent downloads a document's content through its URL.
func fetchContent(t *testing.T, s *quiretest.Server, tok, id string) []byte {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/url", nil, tok)
	var u struct{ URL string }
	json.Unmarshal(r.Body, &u)
	if r.Status != http.StatusOK || u.URL == "" {
		t.Errorf("url of %s: %d %s", id, r.Status, r.Body)
		return nil
	}
	c := s.Do(http.MethodGet, u.URL, nil, "")
	if c.Status != http.StatusOK {
		t.Errorf("content of %s: %d", id, c.Status)
	}
	return c.Body
}

// TestDiskFault_RefusedActionRunsLater: while the store refuses writes
// (here: the commits of the pipeline's start or finish record), an action
// is never recorded FAILED; once writes are taken again it completes
// without a restart.
func TestDiskFault_RefusedActionRunsLater(t *testing.T) {
	for _, op := range []storage.Op{storage.OpStartAction, storage.OpFinishAction} {
		t.Run(string(op), func(t *testing.T) {
			s := servertest.PipelineServer(t)
			tok := s.Admin()
			var refusing atomic.Bool
			var refusals atomic.Int32
			refusing.Store(true)
			s.Node.DB.SetCommitFault(func(c *storage.Command) error {
				if c.Op == op && refusing.Load() {
					refusals.Add(1)
					return &storage.WriteRefusedError{Kind: storage.KindLowSpace, Reason: "insufficient storage: test"}
				}
				return nil
			})
			id := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "hello", "actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}}})
			// Refused several times (RetryBase is 50 ms): never FAILED.
			for deadline := time.Now().Add(10 * time.Second); refusals.Load() < 3; {
				if time.Now().After(deadline) {
					t.Fatalf("the pipeline tried %d times in 10 s, want retries", refusals.Load())
				}
				for _, a := range servertest.Actions(t, s, tok, "", id) {
					if a["status"] == "FAILED" {
						t.Fatalf("action FAILED while writes were refused: %v", a)
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			refusing.Store(false)
			if st := servertest.WaitActions(t, s, tok, "", id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("after writes resumed: %v, want [COMPLETE]", st)
			}
		})
	}
}
