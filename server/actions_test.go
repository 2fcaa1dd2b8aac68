package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/node"
	"quire/pipeline"
	"quire/quiretest"
)

// PipelineServer starts a server whose pipeline retries quickly and signs
// webhooks with a known secret; its receivers run on loopback, which the
// outbound policy must allow.
func PipelineServer(t *testing.T, opts ...quiretest.Option) *quiretest.Server {
	t.Helper()
	base := func(c *node.Config) {
		c.Pipeline.RetryBase = 50 * time.Millisecond
		c.Pipeline.Engines.WebhookSecret = "test-secret"
	}
	return quiretest.NewServer(t, append([]quiretest.Option{base, quiretest.AllowLoopbackOutbound}, opts...)...)
}

// Actions returns a document's actions.
func Actions(t *testing.T, s *quiretest.Server, tok, site, id string) []map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+"/actions"+Query(site, "limit=100"), nil, tok)
	MustStatus(t, r, http.StatusOK)
	var out []map[string]any
	for _, a := range quiretest.List(t, r.JSON(t), "actions") {
		out = append(out, quiretest.Obj(t, a))
	}
	return out
}

// NthAction returns the i-th action of a document, failing t (not the
// package, as indexing past the end would) when it has fewer.
func NthAction(t *testing.T, s *quiretest.Server, tok, site, id string, i int) map[string]any {
	t.Helper()
	a := Actions(t, s, tok, site, id)
	if i >= len(a) {
		t.Fatalf("document %s has %d actions, want one at index %d: %v", id, len(a), i, a)
	}
	return a[i]
}

// WaitActions polls until no action of the document is PENDING, RUNNING or
// WAITING_FOR_RETRY, and returns the statuses in order (bounded: 60 s).
func WaitActions(t *testing.T, s *quiretest.Server, tok, site, id string) []string {
	t.Helper()
	var st []string
	for range 1200 {
		st = st[:0]
		busy := false
		for _, a := range Actions(t, s, tok, site, id) {
			st = append(st, quiretest.Str(t, a, "status"))
			switch a["status"] {
			case "PENDING", "RUNNING", "WAITING_FOR_RETRY":
				busy = true
			}
		}
		if !busy {
			return st
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("actions of %s still busy after 60s: %v", id, st)
	return nil
}

func EqualStrings(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

func TestActions_Validation(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := AddDoc(t, s, tok, site.Query, map[string]any{"content": "x"})
			p := "/documents/" + id + "/actions"
			act := func(typ string, params map[string]any) map[string]any {
				return map[string]any{"actions": []map[string]any{{"type": typ, "parameters": params}}}
			}
			RunSteps(t, s, tok, site.Query, []Step{
				{"no actions", "POST", p, map[string]any{}, 400, `{"errors":[{"key":"actions","error":"'actions' is required"}]}`},
				{"no type", "POST", p, map[string]any{"actions": []map[string]any{{}}}, 400, `{"errors":[{"key":"type","error":"'type' is required"}]}`},
				{"bad type", "POST", p, act("SHRED", nil), 400, `{"errors":[{"key":"type","error":"invalid action type 'SHRED'"}]}`},
				{"webhook url", "POST", p, act("webhook", nil), 400, `{"errors":[{"key":"parameters.url","error":"action 'url' parameter is required"}]}`},
				{"webhook bad url", "POST", p, act("WEBHOOK", map[string]any{"url": "ftp://x"}), 400, `{"errors":[{"key":"parameters.url","error":"invalid 'url' parameter"}]}`},
				{"checksum type", "POST", p, act("CHECKSUM", nil), 400, `{"errors":[{"key":"parameters.checksumType","error":"'checksumType' parameter is required"}]}`},
				{"checksum bad", "POST", p, act("CHECKSUM", map[string]any{"checksumType": "MD5"}), 400, `{"errors":[{"key":"parameters.checksumType","error":"invalid 'checksumType' parameter"}]}`},
				{"tagging", "POST", p, act("DOCUMENTTAGGING", nil), 400, `{"errors":[{"key":"parameters.engine","error":"action 'engine' parameter is required"},{"key":"parameters.tags","error":"action 'tags' parameter is required"}]}`},
				{"tagging engine", "POST", p, act("DOCUMENTTAGGING", map[string]any{"engine": "x", "tags": "a"}), 400, `{"errors":[{"key":"parameters.engine","error":"invalid 'engine' parameter"}]}`},
				{"queue id", "POST", p, act("QUEUE", nil), 400, `{"errors":[{"key":"queueId","error":"'queueId' is required"}]}`},
				{"queue missing", "POST", p, map[string]any{"actions": []map[string]any{{"type": "QUEUE", "queueId": "nope"}}}, 400, `{"errors":[{"key":"queueId","error":"'queueId' does not exist"}]}`},
				{"idp", "POST", p, act("IDP", nil), 400, `{"errors":[{"key":"mappingId","error":"'mappingId' is required"}]}`},
				{"idp missing", "POST", p, act("IDP", map[string]any{"mappingId": "nope"}), 400, `{"errors":[{"key":"mappingId","error":"'mappingId' does not exist"}]}`},
				{"eventbridge", "POST", p, act("EVENTBRIDGE", nil), 400, `{"errors":[{"key":"parameters.eventBusName","error":"'eventBusName' parameter is required"}]}`},
				{"llm", "POST", p, act("LLMPROMPT", nil), 400, `{"errors":[{"key":"parameters.llmPromptEntityName","error":"'llmPromptEntityName' parameter is required"}]}`},
				{"ocr textract", "POST", p, act("OCR", map[string]any{"ocrEngine": "TEXTRACT"}), 400, `~"key":"parameters.ocrEngine"`},
				{"ocr queries", "POST", p, act("OCR", map[string]any{"ocrParseTypes": "QUERIES", "ocrTextractQueries": []map[string]any{{"text": "total?"}}}), 400, `{"errors":[{"key":"parameters.ocrParseTypes","error":"ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server"}]}`},
				{"ocr pages", "POST", p, act("OCR", map[string]any{"ocrNumberOfPages": "0"}), 400, `{"errors":[{"key":"parameters.ocrNumberOfPages","error":"invalid 'ocrNumberOfPages' parameter"}]}`},
				{"fulltext max", "POST", p, act("FULLTEXT", map[string]any{"characterMax": "lots"}), 400, `{"errors":[{"key":"parameters.characterMax","error":"invalid 'characterMax' parameter"}]}`},
				{"resize auto", "POST", p, act("RESIZE", map[string]any{"width": "auto", "height": "auto"}), 400, `{"errors":[{"key":"parameters.width","error":"'width' and 'height' cannot both be 'auto'"}]}`},
				{"resize missing", "POST", p, act("RESIZE", map[string]any{"width": "10"}), 400, `{"errors":[{"key":"parameters.height","error":"action 'height' parameter is required"}]}`},
				{"move slash", "POST", p, act("MOVE", map[string]any{"path": "a/b"}), 400, `{"errors":[{"key":"parameters.path","error":"'path' parameter must end with '/'"}]}`},
				{"delete type", "POST", p, act("DELETE", map[string]any{"deleteType": "SHRED"}), 400, `{"errors":[{"key":"parameters.deleteType","error":"invalid 'deleteType' parameter"}]}`},
				{"notification unconfigured", "POST", p, act("NOTIFICATION", map[string]any{"notificationType": "email", "notificationSubject": "s", "notificationToCc": "a@example.com", "notificationText": "t"}), 400,
					`{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				// FormKiQ's answer on a site without a sender: that alone.
				{"notification fields unconfigured", "POST", p, act("NOTIFICATION", map[string]any{"notificationType": "email", "notificationToCc": "test@example.com"}), 400,
					`{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{"notification on create unconfigured", "POST", "/documents", map[string]any{"content": "x", "actions": []map[string]any{{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email"}}}}, 400,
					`{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{"notification on PATCH unconfigured", "PATCH", "/documents/" + id, map[string]any{"actions": []map[string]any{{"type": "NOTIFICATION"}}}, 400,
					`{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{"on create too", "POST", "/documents", map[string]any{"content": "x", "actions": []map[string]any{{"type": "CHECKSUM"}}}, 400, `{"errors":[{"key":"parameters.checksumType","error":"'checksumType' parameter is required"}]}`},
				{"unknown document", "POST", "/documents/5b7e9d36-0f4c-4b0e-9a8e-000000000000/actions", act("FULLTEXT", nil), 404, ""},
				{"retry nothing failed", "POST", p + "/retry", nil, 404, `{"message":"Failed action not found"}`},
				{"ocr endpoint refuses textract", "POST", "/documents/" + id + "/ocr", map[string]any{"ocrEngine": "TEXTRACT"}, 400, `~"key":"parameters.ocrEngine"`},
				{"bad status filter", "GET", "/documents?actionStatus=COMPLETE", nil, 400, `{"message":"invalid actionStatus 'COMPLETE'"}`},
			})
			if got := Actions(t, s, tok, site.Query, id); len(got) != 0 {
				t.Fatalf("refused requests added actions: %v", got)
			}
			MustBody(t, s.Do(http.MethodPost, "/documents/"+id+"/ocr"+site.Query, map[string]any{"parseTypes": []string{"TEXT"}, "ocrNumberOfPages": "2"}, tok), `{"message":"OCR request submitted"}`)
			if a := Actions(t, s, tok, site.Query, id); len(a) != 1 || a[0]["type"] != "OCR" || quiretest.Obj(t, a[0]["parameters"])["ocrNumberOfPages"] != "2" {
				t.Fatalf("POST /ocr added %v", a)
			}
		})
	}
}

// TestActions_ChecksumAndFulltext runs CHECKSUM and FULLTEXT on a text
// document; the checksum lands on the document and the text is searchable.
func TestActions_ChecksumAndFulltext(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			content := "Invoice from Initech for the quarterly stapler replacement program"
			id := AddDoc(t, s, tok, site.Query, map[string]any{"path": "in/initech.txt", "contentType": "text/plain", "content": content,
				"actions": []map[string]any{{"type": "checksum", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT", "parameters": map[string]any{"characterMax": "40"}}}})
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			sum := sha256.Sum256([]byte(content))
			d := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if d["checksum"] != hex.EncodeToString(sum[:]) || d["checksumType"] != "SHA256" {
				t.Fatalf("checksum %v %v", d["checksum"], d["checksumType"])
			}
			ft := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok)
			MustStatus(t, ft, http.StatusOK)
			if got := ft.JSON(t)["content"]; got != content[:40] {
				t.Fatalf("fulltext content %q", got)
			}
			acts := Actions(t, s, tok, site.Query, id)
			if acts[0]["startDate"] == nil || acts[0]["completedDate"] == nil || acts[0]["retryCount"] != float64(1) {
				t.Fatalf("action dates/count missing: %v", acts[0])
			}
			WaitIndexed(t, s)
			r := s.Do(http.MethodPost, "/search"+site.Query, map[string]any{"query": map[string]any{"text": "quarterly"}}, tok)
			MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), id) {
				t.Fatalf("search for text did not find %s: %s", id, r.Body)
			}
		})
	}
}

// TestActions_WaitForContent: actions given with a document that has no
// content yet wait for the upload, then run in order.
func TestActions_WaitForContent(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "later.txt", "contentType": "text/plain",
				"actions": []map[string]any{{"type": "FULLTEXT"}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}}, tok)
			MustStatus(t, r, http.StatusCreated)
			body := r.JSON(t)
			id, up := quiretest.Str(t, body, "documentId"), quiretest.Str(t, body, "url")
			for _, a := range Actions(t, s, tok, site.Query, id) {
				if a["status"] != "PENDING" {
					t.Fatalf("action ran before the content arrived: %v", a)
				}
			}
			req, _ := http.NewRequest(http.MethodPut, up, strings.NewReader("uploaded later"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("upload status %d", resp.StatusCode)
			}
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			if c := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok).JSON(t)["content"]; c != "uploaded later" {
				t.Fatalf("fulltext %v", c)
			}
		})
	}
}

// Receiver is a real HTTP server recording the requests it gets and
// answering with the statuses given, then 200.
type Receiver struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	statuses []int
	Calls    atomic.Int32
}

func NewReceiver(t *testing.T, statuses ...int) *Receiver {
	rc := &Receiver{statuses: statuses}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.bodies)
		rc.bodies = append(rc.bodies, b)
		rc.headers = append(rc.headers, r.Header.Clone())
		code := http.StatusOK
		if n < len(rc.statuses) {
			code = rc.statuses[n]
		}
		rc.mu.Unlock()
		rc.Calls.Add(1)
		w.WriteHeader(code)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// Count is how many requests the receiver has recorded.
func (rc *Receiver) Count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// BodiesFrom returns the bodies of the requests after the first n.
func (rc *Receiver) BodiesFrom(n int) [][]byte {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([][]byte(nil), rc.bodies[min(n, len(rc.bodies)):]...)
}

func (rc *Receiver) Last() ([]byte, http.Header) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bodies) == 0 {
		return nil, nil
	}
	return rc.bodies[len(rc.bodies)-1], rc.headers[len(rc.headers)-1]
}

// TestActions_WebhookRetriesAndFailures: a 500 is retried with backoff
// until it succeeds; a 404 fails the action, stops the chain, lists the
// document under actionStatus=FAILED, and /retry runs it again in place.
func TestActions_WebhookRetriesAndFailures(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			flaky := NewReceiver(t, 500, 503)
			id := AddDoc(t, s, tok, site.Query, map[string]any{"path": "hook.txt", "content": "webhook body",
				"actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": flaky.URL + "/hook"}}}})
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			if a := NthAction(t, s, tok, site.Query, id, 0); a["retryCount"] != float64(3) {
				t.Fatalf("retryCount %v, want 3 (two failures, one success)", a["retryCount"])
			}
			body, h := flaky.Last()
			mac := hmac.New(sha256.New, []byte("test-secret"))
			mac.Write([]byte(h.Get("X-Quire-Timestamp") + "."))
			mac.Write(body)
			if h.Get("X-Quire-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
				t.Fatalf("bad signature %q", h.Get("X-Quire-Signature"))
			}
			var ev struct {
				Documents []map[string]any `json:"documents"`
			}
			if err := json.Unmarshal(body, &ev); err != nil || len(ev.Documents) != 1 || ev.Documents[0]["documentId"] != id {
				t.Fatalf("webhook body %s", body)
			}
			if u, _ := ev.Documents[0]["url"].(string); !strings.HasPrefix(u, s.URL) {
				t.Fatalf("webhook url %q", u)
			}

			gone := NewReceiver(t, 404)
			id2 := AddDoc(t, s, tok, site.Query, map[string]any{"path": "hook2.txt", "content": "x",
				"actions": []map[string]any{
					{"type": "WEBHOOK", "parameters": map[string]any{"url": gone.URL}},
					{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
				}})
			deadline := time.Now().Add(30 * time.Second)
			for {
				st := WaitActionsOnce(t, s, tok, site.Query, id2)
				if EqualStrings(st, []string{"FAILED", "PENDING"}) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("statuses %v, want FAILED, PENDING", st)
				}
				time.Sleep(50 * time.Millisecond)
			}
			a := NthAction(t, s, tok, site.Query, id2, 0)
			if !strings.Contains(quiretest.Str(t, a, "message"), "404") || gone.Calls.Load() != 1 {
				t.Fatalf("failed action %v after %d calls", a, gone.Calls.Load())
			}
			r := s.Do(http.MethodGet, "/documents"+Query(site.Query, "actionStatus=FAILED"), nil, tok)
			MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), id2) || strings.Contains(string(r.Body), id+`"`) {
				t.Fatalf("actionStatus=FAILED listing: %s", r.Body)
			}
			MustBody(t, s.Do(http.MethodPost, "/documents/"+id2+"/actions/retry"+site.Query, nil, tok), `{"message":"Actions retrying"}`)
			if st := WaitActions(t, s, tok, site.Query, id2); !EqualStrings(st, []string{"FAILED_RETRY", "COMPLETE", "COMPLETE"}) {
				t.Fatalf("after retry: %v", st)
			}
			r = s.Do(http.MethodGet, "/documents"+Query(site.Query, "actionStatus=FAILED"), nil, tok)
			if strings.Contains(string(r.Body), id2) {
				t.Fatalf("still listed as FAILED: %s", r.Body)
			}
		})
	}
}

// WaitActionsOnce returns the current statuses without waiting.
func WaitActionsOnce(t *testing.T, s *quiretest.Server, tok, site, id string) []string {
	var st []string
	for _, a := range Actions(t, s, tok, site, id) {
		st = append(st, quiretest.Str(t, a, "status"))
	}
	return st
}

// TestActions_MoveDeleteQueue: MOVE never overwrites a document of the same
// name, DELETE soft-deletes, QUEUE leaves the document IN_QUEUE and listed
// in its queue.
func TestActions_MoveDeleteQueue(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			there := AddDoc(t, s, tok, site.Query, map[string]any{"path": "archive/report.txt", "content": "old"})
			id := AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/report.txt", "content": "new",
				"actions": []map[string]any{{"type": "MOVE", "parameters": map[string]any{"path": "archive/"}}}})
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("move: %v", st)
			}
			if p := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)["path"]; p != "archive/report ("+id+").txt" {
				t.Fatalf("moved path %v", p)
			}
			if p := s.Do(http.MethodGet, "/documents/"+there+site.Query, nil, tok).JSON(t)["path"]; p != "archive/report.txt" {
				t.Fatalf("existing document path %v", p)
			}

			del := AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmp/x.txt", "content": "x",
				"actions": []map[string]any{{"type": "DELETE", "parameters": map[string]any{"deleteType": "SOFT_DELETE"}}}})
			if st := WaitActions(t, s, tok, site.Query, del); !EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("delete: %v", st)
			}
			r := s.Do(http.MethodGet, "/documents"+Query(site.Query, "softDeleted=true"), nil, tok)
			if !strings.Contains(string(r.Body), del) {
				t.Fatalf("soft-deleted list lacks %s: %s", del, r.Body)
			}

			qr := s.Do(http.MethodPost, "/queues"+site.Query, map[string]any{"name": "Approvals"}, tok)
			MustStatus(t, qr, http.StatusCreated)
			qid := quiretest.Str(t, qr.JSON(t), "queueId")
			qd := AddDoc(t, s, tok, site.Query, map[string]any{"path": "approve/me.txt", "content": "x",
				"actions": []map[string]any{{"type": "QUEUE", "queueId": qid}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}})
			deadline := time.Now().Add(30 * time.Second)
			for !EqualStrings(WaitActionsOnce(t, s, tok, site.Query, qd), []string{"IN_QUEUE", "PENDING"}) {
				if time.Now().After(deadline) {
					t.Fatalf("queue: %v", WaitActionsOnce(t, s, tok, site.Query, qd))
				}
				time.Sleep(50 * time.Millisecond)
			}
			r = s.Do(http.MethodGet, "/queues/"+qid+"/documents"+site.Query, nil, tok)
			MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), qd) {
				t.Fatalf("queue documents: %s", r.Body)
			}
			r = s.Do(http.MethodGet, "/documents"+Query(site.Query, "actionStatus=IN_QUEUE"), nil, tok)
			if !strings.Contains(string(r.Body), qd) {
				t.Fatalf("IN_QUEUE listing: %s", r.Body)
			}
			RunSteps(t, s, tok, site.Query, []Step{
				{"get queue", "GET", "/queues/" + qid, nil, 200, `~"name":"Approvals"`},
				{"list queues", "GET", "/queues", nil, 200, `~"queueId":"` + qid + `"`},
				{"queue not empty", "DELETE", "/queues/" + qid, nil, 400, ""},
				{"no name", "POST", "/queues", map[string]any{}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{"unknown queue", "GET", "/queues/nope", nil, 404, ""},
				{"no decision", "POST", "/queues/" + qid + "/documents/" + qd + "/decisions", map[string]any{}, 400, `{"errors":[{"key":"decision","error":"'decision' is required"}]}`},
				{"approve", "POST", "/queues/" + qid + "/documents/" + qd + "/decisions", map[string]any{"decision": "APPROVE", "comments": "fine"}, 200, `{"message":"Decision saved"}`},
				{"not in queue any more", "POST", "/queues/" + qid + "/documents/" + qd + "/decisions", map[string]any{"decision": "APPROVE"}, 404, ""},
			})
			if st := WaitActions(t, s, tok, site.Query, qd); !EqualStrings(st, []string{"ASYNC_COMPLETE", "COMPLETE"}) {
				t.Fatalf("after approval: %v", st)
			}
			rej := AddDoc(t, s, tok, site.Query, map[string]any{"path": "approve/no.txt", "content": "x",
				"actions": []map[string]any{{"type": "QUEUE", "queueId": qid}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}})
			for deadline := time.Now().Add(30 * time.Second); !EqualStrings(WaitActionsOnce(t, s, tok, site.Query, rej), []string{"IN_QUEUE", "PENDING"}); {
				if time.Now().After(deadline) {
					t.Fatalf("second queue: %v", WaitActionsOnce(t, s, tok, site.Query, rej))
				}
				time.Sleep(50 * time.Millisecond)
			}
			MustStatus(t, s.Do(http.MethodPost, "/queues/"+qid+"/documents/"+rej+"/decisions"+site.Query, map[string]any{"decision": "reject", "comments": "wrong vendor"}, tok), http.StatusOK)
			if a := Actions(t, s, tok, site.Query, rej); a[0]["status"] != "FAILED" || a[0]["message"] != "rejected by admin: wrong vendor" || a[1]["status"] != "PENDING" {
				t.Fatalf("after rejection: %v", a)
			}
			MustBody(t, s.Do(http.MethodDelete, "/queues/"+qid+site.Query, nil, tok), `{"message":"Queue deleted"}`)
		})
	}
}

// TestActions_EventBus posts a CloudEvents JSON event to the configured bus.
func TestActions_EventBus(t *testing.T) {
	bus := NewReceiver(t)
	s := PipelineServer(t, func(c *node.Config) {
		c.Pipeline.Engines.EventBuses = map[string]string{"office-bus": bus.URL + "/events"}
	})
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := AddDoc(t, s, tok, site.Query, map[string]any{"path": "e.txt", "content": "x",
				"actions": []map[string]any{{"type": "EVENTBRIDGE", "parameters": map[string]any{"eventBusName": "office-bus"}}, {"type": "EVENTBUS", "parameters": map[string]any{"eventBusName": "nowhere"}}}})
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE", "FAILED"}) {
				t.Fatalf("statuses %v", st)
			}
			body, h := bus.Last()
			var ev map[string]any
			if err := json.Unmarshal(body, &ev); err != nil || ev["specversion"] != "1.0" || ev["subject"] != id || h.Get("Content-Type") != "application/cloudevents+json" {
				t.Fatalf("event %s (%v)", body, h.Get("Content-Type"))
			}
			if m := NthAction(t, s, tok, site.Query, id, 1)["message"]; m != "event bus 'nowhere' is not configured" {
				t.Fatalf("message %v", m)
			}
		})
	}
}

// TestActions_Publish publishes a document's content: the publication
// keeps serving the published bytes after the document gets new content,
// until it is deleted.
func TestActions_Publish(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	for _, site := range Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := AddDoc(t, s, tok, site.Query, map[string]any{"path": "brochure.txt", "contentType": "text/plain", "content": "edition one",
				"actions": []map[string]any{{"type": "PUBLISH"}}})
			if st := WaitActions(t, s, tok, site.Query, id); !EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("%v %v", st, Actions(t, s, tok, site.Query, id))
			}
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, _ := http.NewRequest(http.MethodGet, s.URL+"/publications/"+id+site.Query, nil)
			req.Header.Set("Authorization", tok)
			resp, err := noFollow.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			loc := resp.Header.Get("Location")
			if resp.StatusCode != http.StatusTemporaryRedirect || !strings.HasPrefix(loc, s.URL+"/published/") {
				t.Fatalf("publication: %d %q", resp.StatusCode, loc)
			}
			MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"content": "edition two"}, tok), http.StatusOK)
			get := func(u string) (int, string) {
				resp, err := http.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if code, body := get(loc); code != http.StatusOK || body != "edition one" {
				t.Fatalf("published content after an update: %d %q", code, body)
			}
			if code, _ := get(strings.Replace(loc, "signature=", "signature=x", 1)); code != http.StatusForbidden {
				t.Fatalf("forged signature: %d", code)
			}
			MustBody(t, s.Do(http.MethodDelete, "/publications/"+id+site.Query, nil, tok), `{"message":"Publication deleted"}`)
			MustStatus(t, s.Do(http.MethodGet, "/publications/"+id+site.Query, nil, tok), http.StatusNotFound)
			if code, _ := get(loc); code != http.StatusNotFound {
				t.Fatalf("deleted publication still served: %d", code)
			}
		})
	}
}

// TestActions_ParameterChecks pins the messages, keys and statuses of the
// parameter checks of every action type (pipeline's action specs), and
// that the API accepts exactly the action types the pipeline runs.
func TestActions_ParameterChecks(t *testing.T) {
	s := PipelineServer(t)
	tok := s.Admin()
	site := Sites[1].Query
	// Accepted actions run: they go on a document of their own, whose
	// content no engine here can do anything with.
	id := AddDoc(t, s, tok, site, map[string]any{"content": "x"})
	p := "/documents/" + id + "/actions"
	act := func(typ string, params any) map[string]any {
		return map[string]any{"actions": []map[string]any{{"type": typ, "parameters": params}}}
	}
	type m = map[string]any
	RunSteps(t, s, tok, site, []Step{
		{"ocr engine", "POST", p, act("OCR", m{"ocrEngine": "abc"}), 400, `{"errors":[{"key":"parameters.ocrEngine","error":"invalid 'ocrEngine' parameter"}]}`},
		{"ocr textract", "POST", p, act("OCR", m{"ocrEngine": "textract"}), 400, `{"errors":[{"key":"parameters.ocrEngine","error":"ocrEngine 'TEXTRACT' is a cloud service and is not available on this server; use 'TESSERACT'"}]}`},
		{"ocr several", "POST", p, act("OCR", m{"ocrParseTypes": "TEXT, bogus,queries", "ocrNumberOfPages": -2, "addPdfDetectedCharactersAsText": "yes"}), 400,
			`{"errors":[{"key":"parameters.ocrParseTypes","error":"invalid 'ocrParseTypes' parameter"},{"key":"parameters.ocrParseTypes","error":"ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server"},{"key":"parameters.ocrNumberOfPages","error":"invalid 'ocrNumberOfPages' parameter"},{"key":"parameters.addPdfDetectedCharactersAsText","error":"invalid 'addPdfDetectedCharactersAsText' parameter"}]}`},
		{"fulltext zero", "POST", p, act("FULLTEXT", m{"characterMax": 0}), 400, `{"errors":[{"key":"parameters.characterMax","error":"invalid 'characterMax' parameter"}]}`},
		{"webhook no host", "POST", p, act("WEBHOOK", m{"url": "http://"}), 400, `{"errors":[{"key":"parameters.url","error":"invalid 'url' parameter"}]}`},
		{"webhook policy", "POST", p, act("WEBHOOK", m{"url": "http://169.254.169.254/latest"}), 400, `{"errors":[{"key":"parameters.url","error":"destination 169.254.169.254 is not allowed by the server's outbound policy (the operator can allow its network with outbound.allow)"}]}`},
		{"notification html bcc", "POST", p, act("NOTIFICATION", m{"notificationType": "EMAIL", "notificationSubject": "s", "notificationToBcc": "a@example.com", "notificationHtml": "<p>"}), 400,
			`{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
		{"eventbus", "POST", p, act("eventbus", nil), 400, `{"errors":[{"key":"parameters.eventBusName","error":"'eventBusName' parameter is required"}]}`},
		{"resize bad", "POST", p, act("RESIZE", m{"width": "0", "height": 20001, "outputType": "bmp"}), 400,
			`{"errors":[{"key":"parameters.width","error":"invalid 'width' parameter"},{"key":"parameters.height","error":"invalid 'height' parameter"},{"key":"parameters.outputType","error":"invalid 'outputType' parameter"}]}`},
		{"resize none", "POST", p, act("RESIZE", nil), 400,
			`{"errors":[{"key":"parameters.width","error":"action 'width' parameter is required"},{"key":"parameters.height","error":"action 'height' parameter is required"}]}`},
		{"classification entity", "POST", p, act("DATA_CLASSIFICATION", m{"llmPromptEntityName": "nope"}), 400, `{"errors":[{"key":"parameters.llmPromptEntityName","error":"entity 'nope' not found"}]}`},
		{"extraction", "POST", p, act("METADATA_EXTRACTION", nil), 400, `{"errors":[{"key":"parameters.llmPromptEntityName","error":"'llmPromptEntityName' parameter is required"}]}`},
		{"move", "POST", p, act("MOVE", nil), 400, `{"errors":[{"key":"parameters.path","error":"'path' parameter is required"}]}`},
		{"delete", "POST", p, act("DELETE", nil), 400, `{"errors":[{"key":"parameters.deleteType","error":"'deleteType' parameter is required"}]}`},
		{"idp blank", "POST", p, act("IDP", m{"mappingId": "  "}), 400, `{"errors":[{"key":"mappingId","error":"'mappingId' is required"}]}`},
		{"parameters string", "POST", p, act("CHECKSUM", "SHA1"), 400, `{"errors":[{"key":"parameters","error":"invalid 'parameters'"}]}`},
		{"parameters list", "POST", p, act("CHECKSUM", []string{"SHA1"}), 400, `{"errors":[{"key":"parameters","error":"invalid 'parameters'"}]}`},
		{"several actions", "POST", p, m{"actions": []m{{"type": "SHRED"}, {"type": "CHECKSUM"}, {"type": ""}, {"type": "PUBLISH"}}}, 400,
			`{"errors":[{"key":"type","error":"invalid action type 'SHRED'"},{"key":"parameters.checksumType","error":"'checksumType' parameter is required"},{"key":"type","error":"'type' is required"}]}`},
	})
	// The parameters of NOTIFICATION are checked on a site with a sender
	// address (without one, that is the only answer).
	SetSiteConfig(t, s, tok, "", map[string]any{"notificationEmail": "dms@example.com"})
	mailed := AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	RunSteps(t, s, tok, "", []Step{
		{"notification all", "POST", "/documents/" + mailed + "/actions", act("NOTIFICATION", m{"notificationType": "sms", "notificationToBcc": "a@example.com, nope"}), 400,
			`{"errors":[{"key":"parameters.notificationType","error":"invalid 'notificationType' parameter"},{"key":"parameters.notificationSubject","error":"action 'notificationSubject' parameter is required"},{"key":"parameters.notificationText","error":"action 'notificationText' parameter is required"},{"key":"parameters.notificationToBcc","error":"invalid email address 'nope'"}]}`},
		{"notification none", "POST", "/documents/" + mailed + "/actions", act("NOTIFICATION", nil), 400,
			`{"errors":[{"key":"parameters.notificationType","error":"action 'notificationType' parameter is required"},{"key":"parameters.notificationSubject","error":"action 'notificationSubject' parameter is required"},{"key":"parameters.notificationToCc","error":"action 'notificationToCc' parameter is required"},{"key":"parameters.notificationText","error":"action 'notificationText' parameter is required"}]}`},
	})
	if got := Actions(t, s, tok, "", mailed); len(got) != 0 {
		t.Fatalf("refused requests added actions: %v", got)
	}
	if got := Actions(t, s, tok, site, id); len(got) != 0 {
		t.Fatalf("refused requests added actions: %v", got)
	}
	RunSteps(t, s, tok, site, []Step{
		{"checksum trimmed", "POST", p, act("CHECKSUM", m{"checksumType": " sha512 "}), 200, `{"message":"Actions saved"}`},
		{"fulltext number", "POST", p, act("FULLTEXT", m{"characterMax": -1}), 200, `{"message":"Actions saved"}`},
		{"resize auto", "POST", p, act("RESIZE", m{"width": "auto", "height": 10, "outputType": ".PNG"}), 200, `{"message":"Actions saved"}`},
	})
	got := Actions(t, s, tok, site, id)
	if len(got) != 3 || got[0]["type"] != "CHECKSUM" || got[1]["type"] != "FULLTEXT" || got[2]["type"] != "RESIZE" {
		t.Fatalf("accepted actions: %v", got)
	}
	if ps := quiretest.Obj(t, got[0]["parameters"]); ps["checksumType"] != " sha512 " {
		t.Fatalf("CHECKSUM parameters stored as %v, want them as given", ps)
	}

	// Every type the pipeline runs is accepted by name (its parameters
	// may still be refused), in any case; nothing else is.
	types := pipeline.Actions().Types()
	if want := []string{"ANTIVIRUS", "CHECKSUM", "DATA_CLASSIFICATION", "DELETE", "DOCUMENTTAGGING", "EVENTBRIDGE", "EVENTBUS",
		"FULLTEXT", "IDP", "LLMPROMPT", "MALWARE_SCAN", "METADATA_EXTRACTION", "MOVE", "NOTIFICATION", "OCR", "PDFEXPORT",
		"PUBLISH", "QUEUE", "RESIZE", "WEBHOOK"}; !EqualStrings(types, want) {
		t.Fatalf("action types %v, want %v", types, want)
	}
	// A deep link has no content: its actions never run.
	other := AddDoc(t, s, tok, site, map[string]any{"deepLinkPath": "https://example.com/a.pdf"})
	for _, typ := range types {
		r := s.Do(http.MethodPost, "/documents/"+other+"/actions"+site, act(strings.ToLower(typ), nil), tok)
		if body := string(r.Body); (r.Status != 200 && r.Status != 400) || strings.Contains(body, "invalid action type") || strings.Contains(body, `"key":"type"`) {
			t.Errorf("%s: %d %s", typ, r.Status, body)
		}
	}
	for _, typ := range []string{"SHRED", "EVENT_BUS", "TEXTRACT", "OCR "} {
		want := `{"errors":[{"key":"type","error":"invalid action type '` + typ + `'"}]}`
		MustBody(t, s.Do(http.MethodPost, "/documents/"+other+"/actions"+site, act(typ, nil), tok), want)
	}
}
