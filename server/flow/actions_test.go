package flow_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/pipeline"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestActions_Validation(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"content": "x", "actions": []any{}})
			p := "/documents/" + id + "/actions"
			act := func(typ string, params map[string]any) map[string]any {
				return map[string]any{"actions": []map[string]any{{"type": typ, "parameters": params}}}
			}
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "no actions", Method: "POST", Path: p, Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"actions","error":"'actions' is required"}]}`},
				{Name: "no type", Method: "POST", Path: p, Body: map[string]any{"actions": []map[string]any{{}}}, Want: 400, Resp: `{"errors":[{"key":"type","error":"'type' is required"}]}`},
				{Name: "bad type", Method: "POST", Path: p, Body: act("SHRED", nil), Want: 400, Resp: `{"errors":[{"key":"type","error":"invalid action type 'SHRED'"}]}`},
				{Name: "webhook url", Method: "POST", Path: p, Body: act("webhook", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.url","error":"action 'url' parameter is required"}]}`},
				{Name: "webhook bad url", Method: "POST", Path: p, Body: act("WEBHOOK", map[string]any{"url": "ftp://x"}), Want: 400, Resp: `{"errors":[{"key":"parameters.url","error":"invalid 'url' parameter"}]}`},
				{Name: "checksum type", Method: "POST", Path: p, Body: act("CHECKSUM", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.checksumType","error":"'checksumType' parameter is required"}]}`},
				{Name: "checksum bad", Method: "POST", Path: p, Body: act("CHECKSUM", map[string]any{"checksumType": "MD5"}), Want: 400, Resp: `{"errors":[{"key":"parameters.checksumType","error":"invalid 'checksumType' parameter"}]}`},
				{Name: "tagging", Method: "POST", Path: p, Body: act("DOCUMENTTAGGING", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.engine","error":"action 'engine' parameter is required"},{"key":"parameters.tags","error":"action 'tags' parameter is required"}]}`},
				{Name: "tagging engine", Method: "POST", Path: p, Body: act("DOCUMENTTAGGING", map[string]any{"engine": "x", "tags": "a"}), Want: 400, Resp: `{"errors":[{"key":"parameters.engine","error":"invalid 'engine' parameter"}]}`},
				{Name: "queue id", Method: "POST", Path: p, Body: act("QUEUE", nil), Want: 400, Resp: `{"errors":[{"key":"queueId","error":"'queueId' is required"}]}`},
				{Name: "queue missing", Method: "POST", Path: p, Body: map[string]any{"actions": []map[string]any{{"type": "QUEUE", "queueId": "nope"}}}, Want: 400, Resp: `{"errors":[{"key":"queueId","error":"'queueId' does not exist"}]}`},
				{Name: "idp", Method: "POST", Path: p, Body: act("IDP", nil), Want: 400, Resp: `{"errors":[{"key":"mappingId","error":"'mappingId' is required"}]}`},
				{Name: "idp missing", Method: "POST", Path: p, Body: act("IDP", map[string]any{"mappingId": "nope"}), Want: 400, Resp: `{"errors":[{"key":"mappingId","error":"'mappingId' does not exist"}]}`},
				{Name: "eventbridge", Method: "POST", Path: p, Body: act("EVENTBRIDGE", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.eventBusName","error":"'eventBusName' parameter is required"}]}`},
				{Name: "llm", Method: "POST", Path: p, Body: act("LLMPROMPT", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.llmPromptEntityName","error":"'llmPromptEntityName' parameter is required"}]}`},
				{Name: "ocr textract", Method: "POST", Path: p, Body: act("OCR", map[string]any{"ocrEngine": "TEXTRACT"}), Want: 400, Resp: `~"key":"parameters.ocrEngine"`},
				{Name: "ocr queries", Method: "POST", Path: p, Body: act("OCR", map[string]any{"ocrParseTypes": "QUERIES", "ocrTextractQueries": []map[string]any{{"text": "total?"}}}), Want: 400, Resp: `{"errors":[{"key":"parameters.ocrParseTypes","error":"ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server"}]}`},
				{Name: "ocr pages", Method: "POST", Path: p, Body: act("OCR", map[string]any{"ocrNumberOfPages": "0"}), Want: 400, Resp: `{"errors":[{"key":"parameters.ocrNumberOfPages","error":"invalid 'ocrNumberOfPages' parameter"}]}`},
				{Name: "fulltext max", Method: "POST", Path: p, Body: act("FULLTEXT", map[string]any{"characterMax": "lots"}), Want: 400, Resp: `{"errors":[{"key":"parameters.characterMax","error":"invalid 'characterMax' parameter"}]}`},
				{Name: "resize auto", Method: "POST", Path: p, Body: act("RESIZE", map[string]any{"width": "auto", "height": "auto"}), Want: 400, Resp: `{"errors":[{"key":"parameters.width","error":"'width' and 'height' cannot both be 'auto'"}]}`},
				{Name: "resize missing", Method: "POST", Path: p, Body: act("RESIZE", map[string]any{"width": "10"}), Want: 400, Resp: `{"errors":[{"key":"parameters.height","error":"action 'height' parameter is required"}]}`},
				{Name: "move slash", Method: "POST", Path: p, Body: act("MOVE", map[string]any{"path": "a/b"}), Want: 400, Resp: `{"errors":[{"key":"parameters.path","error":"'path' parameter must end with '/'"}]}`},
				{Name: "delete type", Method: "POST", Path: p, Body: act("DELETE", map[string]any{"deleteType": "SHRED"}), Want: 400, Resp: `{"errors":[{"key":"parameters.deleteType","error":"invalid 'deleteType' parameter"}]}`},
				{Name: "notification unconfigured", Method: "POST", Path: p, Body: act("NOTIFICATION", map[string]any{"notificationType": "email", "notificationSubject": "s", "notificationToCc": "a@example.com", "notificationText": "t"}), Want: 400,
					Resp: `{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				// FormKiQ's answer on a site without a sender: that alone.
				{Name: "notification fields unconfigured", Method: "POST", Path: p, Body: act("NOTIFICATION", map[string]any{"notificationType": "email", "notificationToCc": "test@example.com"}), Want: 400,
					Resp: `{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{Name: "notification on create unconfigured", Method: "POST", Path: "/documents", Body: map[string]any{"content": "x", "actions": []map[string]any{{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email"}}}}, Want: 400,
					Resp: `{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{Name: "notification on PATCH unconfigured", Method: "PATCH", Path: "/documents/" + id, Body: map[string]any{"actions": []map[string]any{{"type": "NOTIFICATION"}}}, Want: 400,
					Resp: `{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
				{Name: "on create too", Method: "POST", Path: "/documents", Body: map[string]any{"content": "x", "actions": []map[string]any{{"type": "CHECKSUM"}}}, Want: 400, Resp: `{"errors":[{"key":"parameters.checksumType","error":"'checksumType' parameter is required"}]}`},
				{Name: "unknown document", Method: "POST", Path: "/documents/5b7e9d36-0f4c-4b0e-9a8e-000000000000/actions", Body: act("FULLTEXT", nil), Want: 404, Resp: ""},
				{Name: "retry nothing failed", Method: "POST", Path: p + "/retry", Body: nil, Want: 404, Resp: `{"message":"Failed action not found"}`},
				{Name: "ocr endpoint refuses textract", Method: "POST", Path: "/documents/" + id + "/ocr", Body: map[string]any{"ocrEngine": "TEXTRACT"}, Want: 400, Resp: `~"key":"parameters.ocrEngine"`},
				{Name: "bad status filter", Method: "GET", Path: "/documents?actionStatus=COMPLETE", Body: nil, Want: 400, Resp: `{"message":"invalid actionStatus 'COMPLETE'"}`},
			})
			if got := servertest.Actions(t, s, tok, site.Query, id); len(got) != 0 {
				t.Fatalf("refused requests added actions: %v", got)
			}
			servertest.MustBody(t, s.Do(http.MethodPost, "/documents/"+id+"/ocr"+site.Query, map[string]any{"parseTypes": []string{"TEXT"}, "ocrNumberOfPages": "2"}, tok), `{"message":"OCR request submitted"}`)
			if a := servertest.Actions(t, s, tok, site.Query, id); len(a) != 1 || a[0]["type"] != "OCR" || quiretest.Obj(t, a[0]["parameters"])["ocrNumberOfPages"] != "2" {
				t.Fatalf("POST /ocr added %v", a)
			}
		})
	}
}

// TestActions_ChecksumAndFulltext runs CHECKSUM and FULLTEXT on a text
// document; the checksum lands on the document and the text is searchable.
func TestActions_ChecksumAndFulltext(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			content := "Invoice from Initech for the quarterly stapler replacement program"
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "in/initech.txt", "contentType": "text/plain", "content": content,
				"actions": []map[string]any{{"type": "checksum", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT", "parameters": map[string]any{"characterMax": "40"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			sum := sha256.Sum256([]byte(content))
			d := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)
			if d["checksum"] != hex.EncodeToString(sum[:]) || d["checksumType"] != "SHA256" {
				t.Fatalf("checksum %v %v", d["checksum"], d["checksumType"])
			}
			ft := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok)
			servertest.MustStatus(t, ft, http.StatusOK)
			if got := ft.JSON(t)["content"]; got != content[:40] {
				t.Fatalf("fulltext content %q", got)
			}
			acts := servertest.Actions(t, s, tok, site.Query, id)
			if acts[0]["startDate"] == nil || acts[0]["completedDate"] == nil || acts[0]["retryCount"] != float64(1) {
				t.Fatalf("action dates/count missing: %v", acts[0])
			}
			servertest.WaitIndexed(t, s)
			r := s.Do(http.MethodPost, "/search"+site.Query, map[string]any{"query": map[string]any{"text": "quarterly"}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), id) {
				t.Fatalf("search for text did not find %s: %s", id, r.Body)
			}
		})
	}
}

// TestActions_WaitForContent: actions given with a document that has no
// content yet wait for the upload, then run in order.
func TestActions_WaitForContent(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents/upload"+site.Query, map[string]any{"path": "later.txt", "contentType": "text/plain",
				"actions": []map[string]any{{"type": "FULLTEXT"}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			body := r.JSON(t)
			id, up := quiretest.Str(t, body, "documentId"), quiretest.Str(t, body, "url")
			for _, a := range servertest.Actions(t, s, tok, site.Query, id) {
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
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			if c := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok).JSON(t)["content"]; c != "uploaded later" {
				t.Fatalf("fulltext %v", c)
			}
		})
	}
}

// TestActions_WebhookRetriesAndFailures: a 500 is retried with backoff
// until it succeeds; a 404 fails the action, stops the chain, lists the
// document under actionStatus=FAILED, and /retry runs it again in place.
func TestActions_WebhookRetriesAndFailures(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			flaky := servertest.NewReceiver(t, 500, 503)
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "hook.txt", "content": "webhook body",
				"actions": []map[string]any{{"type": "WEBHOOK", "parameters": map[string]any{"url": flaky.URL + "/hook"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("statuses %v", st)
			}
			if a := servertest.NthAction(t, s, tok, site.Query, id, 0); a["retryCount"] != float64(3) {
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

			gone := servertest.NewReceiver(t, 404)
			id2 := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "hook2.txt", "content": "x",
				"actions": []map[string]any{
					{"type": "WEBHOOK", "parameters": map[string]any{"url": gone.URL}},
					{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
				}})
			deadline := time.Now().Add(30 * time.Second)
			for {
				st := servertest.WaitActionsOnce(t, s, tok, site.Query, id2)
				if servertest.EqualStrings(st, []string{"FAILED", "PENDING"}) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("statuses %v, want FAILED, PENDING", st)
				}
				time.Sleep(50 * time.Millisecond)
			}
			a := servertest.NthAction(t, s, tok, site.Query, id2, 0)
			if !strings.Contains(quiretest.Str(t, a, "message"), "404") || gone.Calls.Load() != 1 {
				t.Fatalf("failed action %v after %d calls", a, gone.Calls.Load())
			}
			r := s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "actionStatus=FAILED"), nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), id2) || strings.Contains(string(r.Body), id+`"`) {
				t.Fatalf("actionStatus=FAILED listing: %s", r.Body)
			}
			servertest.MustBody(t, s.Do(http.MethodPost, "/documents/"+id2+"/actions/retry"+site.Query, nil, tok), `{"message":"Actions retrying"}`)
			if st := servertest.WaitActions(t, s, tok, site.Query, id2); !servertest.EqualStrings(st, []string{"FAILED_RETRY", "COMPLETE", "COMPLETE"}) {
				t.Fatalf("after retry: %v", st)
			}
			r = s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "actionStatus=FAILED"), nil, tok)
			if strings.Contains(string(r.Body), id2) {
				t.Fatalf("still listed as FAILED: %s", r.Body)
			}
		})
	}
}

// TestActions_MoveDeleteQueue: MOVE never overwrites a document of the same
// name, DELETE soft-deletes, QUEUE leaves the document IN_QUEUE and listed
// in its queue.
func TestActions_MoveDeleteQueue(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			there := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "archive/report.txt", "content": "old"})
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/report.txt", "content": "new",
				"actions": []map[string]any{{"type": "MOVE", "parameters": map[string]any{"path": "archive/"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("move: %v", st)
			}
			if p := s.Do(http.MethodGet, "/documents/"+id+site.Query, nil, tok).JSON(t)["path"]; p != "archive/report ("+id+").txt" {
				t.Fatalf("moved path %v", p)
			}
			if p := s.Do(http.MethodGet, "/documents/"+there+site.Query, nil, tok).JSON(t)["path"]; p != "archive/report.txt" {
				t.Fatalf("existing document path %v", p)
			}

			del := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmp/x.txt", "content": "x",
				"actions": []map[string]any{{"type": "DELETE", "parameters": map[string]any{"deleteType": "SOFT_DELETE"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, del); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("delete: %v", st)
			}
			r := s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "softDeleted=true"), nil, tok)
			if !strings.Contains(string(r.Body), del) {
				t.Fatalf("soft-deleted list lacks %s: %s", del, r.Body)
			}

			qr := s.Do(http.MethodPost, "/queues"+site.Query, map[string]any{"name": "Approvals"}, tok)
			servertest.MustStatus(t, qr, http.StatusCreated)
			qid := quiretest.Str(t, qr.JSON(t), "queueId")
			qd := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "approve/me.txt", "content": "x",
				"actions": []map[string]any{{"type": "QUEUE", "queueId": qid}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}})
			deadline := time.Now().Add(30 * time.Second)
			for !servertest.EqualStrings(servertest.WaitActionsOnce(t, s, tok, site.Query, qd), []string{"IN_QUEUE", "PENDING"}) {
				if time.Now().After(deadline) {
					t.Fatalf("queue: %v", servertest.WaitActionsOnce(t, s, tok, site.Query, qd))
				}
				time.Sleep(50 * time.Millisecond)
			}
			r = s.Do(http.MethodGet, "/queues/"+qid+"/documents"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), qd) {
				t.Fatalf("queue documents: %s", r.Body)
			}
			r = s.Do(http.MethodGet, "/documents"+servertest.Query(site.Query, "actionStatus=IN_QUEUE"), nil, tok)
			if !strings.Contains(string(r.Body), qd) {
				t.Fatalf("IN_QUEUE listing: %s", r.Body)
			}
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "get queue", Method: "GET", Path: "/queues/" + qid, Body: nil, Want: 200, Resp: `~"name":"Approvals"`},
				{Name: "list queues", Method: "GET", Path: "/queues", Body: nil, Want: 200, Resp: `~"queueId":"` + qid + `"`},
				{Name: "queue not empty", Method: "DELETE", Path: "/queues/" + qid, Body: nil, Want: 400, Resp: ""},
				{Name: "no name", Method: "POST", Path: "/queues", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "unknown queue", Method: "GET", Path: "/queues/nope", Body: nil, Want: 404, Resp: ""},
				{Name: "no decision", Method: "POST", Path: "/queues/" + qid + "/documents/" + qd + "/decisions", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"decision","error":"'decision' is required"}]}`},
				{Name: "approve", Method: "POST", Path: "/queues/" + qid + "/documents/" + qd + "/decisions", Body: map[string]any{"decision": "APPROVE", "comments": "fine"}, Want: 200, Resp: `{"message":"Decision saved"}`},
				{Name: "not in queue any more", Method: "POST", Path: "/queues/" + qid + "/documents/" + qd + "/decisions", Body: map[string]any{"decision": "APPROVE"}, Want: 404, Resp: ""},
			})
			if st := servertest.WaitActions(t, s, tok, site.Query, qd); !servertest.EqualStrings(st, []string{"ASYNC_COMPLETE", "COMPLETE"}) {
				t.Fatalf("after approval: %v", st)
			}
			rej := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "approve/no.txt", "content": "x",
				"actions": []map[string]any{{"type": "QUEUE", "queueId": qid}, {"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA1"}}}})
			for deadline := time.Now().Add(30 * time.Second); !servertest.EqualStrings(servertest.WaitActionsOnce(t, s, tok, site.Query, rej), []string{"IN_QUEUE", "PENDING"}); {
				if time.Now().After(deadline) {
					t.Fatalf("second queue: %v", servertest.WaitActionsOnce(t, s, tok, site.Query, rej))
				}
				time.Sleep(50 * time.Millisecond)
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/queues/"+qid+"/documents/"+rej+"/decisions"+site.Query, map[string]any{"decision": "reject", "comments": "wrong vendor"}, tok), http.StatusOK)
			if a := servertest.Actions(t, s, tok, site.Query, rej); a[0]["status"] != "FAILED" || a[0]["message"] != "rejected by admin: wrong vendor" || a[1]["status"] != "PENDING" {
				t.Fatalf("after rejection: %v", a)
			}
			servertest.MustBody(t, s.Do(http.MethodDelete, "/queues/"+qid+site.Query, nil, tok), `{"message":"Queue deleted"}`)
		})
	}
}

// TestActions_EventBus posts a CloudEvents JSON event to the configured bus.
func TestActions_EventBus(t *testing.T) {
	bus := servertest.NewReceiver(t)
	s := servertest.PipelineServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.EventBuses = map[string]string{"office-bus": bus.URL + "/events"}
	})
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "e.txt", "content": "x",
				"actions": []map[string]any{{"type": "EVENTBRIDGE", "parameters": map[string]any{"eventBusName": "office-bus"}}, {"type": "EVENTBUS", "parameters": map[string]any{"eventBusName": "nowhere"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE", "FAILED"}) {
				t.Fatalf("statuses %v", st)
			}
			body, h := bus.Last()
			var ev map[string]any
			if err := json.Unmarshal(body, &ev); err != nil || ev["specversion"] != "1.0" || ev["subject"] != id || h.Get("Content-Type") != "application/cloudevents+json" {
				t.Fatalf("event %s (%v)", body, h.Get("Content-Type"))
			}
			if m := servertest.NthAction(t, s, tok, site.Query, id, 1)["message"]; m != "event bus 'nowhere' is not configured" {
				t.Fatalf("message %v", m)
			}
		})
	}
}

// TestActions_Publish publishes a document's content: the publication
// keeps serving the published bytes after the document gets new content,
// until it is deleted.
func TestActions_Publish(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "brochure.txt", "contentType": "text/plain", "content": "edition one",
				"actions": []map[string]any{{"type": "PUBLISH"}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
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
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"content": "edition two"}, tok), http.StatusOK)
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
			servertest.MustBody(t, s.Do(http.MethodDelete, "/publications/"+id+site.Query, nil, tok), `{"message":"Publication deleted"}`)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/publications/"+id+site.Query, nil, tok), http.StatusNotFound)
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
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	site := servertest.Sites[1].Query
	// Accepted actions run: they go on a document of their own, whose
	// content no engine here can do anything with.
	id := servertest.AddDoc(t, s, tok, site, map[string]any{"content": "x", "actions": []any{}})
	p := "/documents/" + id + "/actions"
	act := func(typ string, params any) map[string]any {
		return map[string]any{"actions": []map[string]any{{"type": typ, "parameters": params}}}
	}
	type m = map[string]any
	servertest.RunSteps(t, s, tok, site, []servertest.Step{
		{Name: "ocr engine", Method: "POST", Path: p, Body: act("OCR", m{"ocrEngine": "abc"}), Want: 400, Resp: `{"errors":[{"key":"parameters.ocrEngine","error":"invalid 'ocrEngine' parameter"}]}`},
		{Name: "ocr textract", Method: "POST", Path: p, Body: act("OCR", m{"ocrEngine": "textract"}), Want: 400, Resp: `{"errors":[{"key":"parameters.ocrEngine","error":"ocrEngine 'TEXTRACT' is a cloud service and is not available on this server; use 'TESSERACT'"}]}`},
		{Name: "ocr several", Method: "POST", Path: p, Body: act("OCR", m{"ocrParseTypes": "TEXT, bogus,queries", "ocrNumberOfPages": -2, "addPdfDetectedCharactersAsText": "yes"}), Want: 400,
			Resp: `{"errors":[{"key":"parameters.ocrParseTypes","error":"invalid 'ocrParseTypes' parameter"},{"key":"parameters.ocrParseTypes","error":"ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server"},{"key":"parameters.ocrNumberOfPages","error":"invalid 'ocrNumberOfPages' parameter"},{"key":"parameters.addPdfDetectedCharactersAsText","error":"invalid 'addPdfDetectedCharactersAsText' parameter"}]}`},
		{Name: "fulltext zero", Method: "POST", Path: p, Body: act("FULLTEXT", m{"characterMax": 0}), Want: 400, Resp: `{"errors":[{"key":"parameters.characterMax","error":"invalid 'characterMax' parameter"}]}`},
		{Name: "webhook no host", Method: "POST", Path: p, Body: act("WEBHOOK", m{"url": "http://"}), Want: 400, Resp: `{"errors":[{"key":"parameters.url","error":"invalid 'url' parameter"}]}`},
		{Name: "webhook policy", Method: "POST", Path: p, Body: act("WEBHOOK", m{"url": "http://169.254.169.254/latest"}), Want: 400, Resp: `{"errors":[{"key":"parameters.url","error":"destination 169.254.169.254 is not allowed by the server's outbound policy (the operator can allow its network with outbound.allow)"}]}`},
		{Name: "notification html bcc", Method: "POST", Path: p, Body: act("NOTIFICATION", m{"notificationType": "EMAIL", "notificationSubject": "s", "notificationToBcc": "a@example.com", "notificationHtml": "<p>"}), Want: 400,
			Resp: `{"errors":[{"key":"parameters.notificationEmail","error":"notificationEmail is not configured"}]}`},
		{Name: "eventbus", Method: "POST", Path: p, Body: act("eventbus", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.eventBusName","error":"'eventBusName' parameter is required"}]}`},
		{Name: "resize bad", Method: "POST", Path: p, Body: act("RESIZE", m{"width": "0", "height": 20001, "outputType": "bmp"}), Want: 400,
			Resp: `{"errors":[{"key":"parameters.width","error":"invalid 'width' parameter"},{"key":"parameters.height","error":"invalid 'height' parameter"},{"key":"parameters.outputType","error":"invalid 'outputType' parameter"}]}`},
		{Name: "resize none", Method: "POST", Path: p, Body: act("RESIZE", nil), Want: 400,
			Resp: `{"errors":[{"key":"parameters.width","error":"action 'width' parameter is required"},{"key":"parameters.height","error":"action 'height' parameter is required"}]}`},
		{Name: "classification entity", Method: "POST", Path: p, Body: act("DATA_CLASSIFICATION", m{"llmPromptEntityName": "nope"}), Want: 400, Resp: `{"errors":[{"key":"parameters.llmPromptEntityName","error":"entity 'nope' not found"}]}`},
		{Name: "extraction", Method: "POST", Path: p, Body: act("METADATA_EXTRACTION", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.llmPromptEntityName","error":"'llmPromptEntityName' parameter is required"}]}`},
		{Name: "move", Method: "POST", Path: p, Body: act("MOVE", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.path","error":"'path' parameter is required"}]}`},
		{Name: "delete", Method: "POST", Path: p, Body: act("DELETE", nil), Want: 400, Resp: `{"errors":[{"key":"parameters.deleteType","error":"'deleteType' parameter is required"}]}`},
		{Name: "idp blank", Method: "POST", Path: p, Body: act("IDP", m{"mappingId": "  "}), Want: 400, Resp: `{"errors":[{"key":"mappingId","error":"'mappingId' is required"}]}`},
		{Name: "parameters string", Method: "POST", Path: p, Body: act("CHECKSUM", "SHA1"), Want: 400, Resp: `{"errors":[{"key":"parameters","error":"invalid 'parameters'"}]}`},
		{Name: "parameters list", Method: "POST", Path: p, Body: act("CHECKSUM", []string{"SHA1"}), Want: 400, Resp: `{"errors":[{"key":"parameters","error":"invalid 'parameters'"}]}`},
		{Name: "several actions", Method: "POST", Path: p, Body: m{"actions": []m{{"type": "SHRED"}, {"type": "CHECKSUM"}, {"type": ""}, {"type": "PUBLISH"}}}, Want: 400,
			Resp: `{"errors":[{"key":"type","error":"invalid action type 'SHRED'"},{"key":"parameters.checksumType","error":"'checksumType' parameter is required"},{"key":"type","error":"'type' is required"}]}`},
	})
	// The parameters of NOTIFICATION are checked on a site with a sender
	// address (without one, that is the only answer).
	servertest.SetSiteConfig(t, s, tok, "", map[string]any{"notificationEmail": "dms@example.com"})
	mailed := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x", "actions": []any{}})
	servertest.RunSteps(t, s, tok, "", []servertest.Step{
		{Name: "notification all", Method: "POST", Path: "/documents/" + mailed + "/actions", Body: act("NOTIFICATION", m{"notificationType": "sms", "notificationToBcc": "a@example.com, nope"}), Want: 400,
			Resp: `{"errors":[{"key":"parameters.notificationType","error":"invalid 'notificationType' parameter"},{"key":"parameters.notificationSubject","error":"action 'notificationSubject' parameter is required"},{"key":"parameters.notificationText","error":"action 'notificationText' parameter is required"},{"key":"parameters.notificationToBcc","error":"invalid email address 'nope'"}]}`},
		{Name: "notification none", Method: "POST", Path: "/documents/" + mailed + "/actions", Body: act("NOTIFICATION", nil), Want: 400,
			Resp: `{"errors":[{"key":"parameters.notificationType","error":"action 'notificationType' parameter is required"},{"key":"parameters.notificationSubject","error":"action 'notificationSubject' parameter is required"},{"key":"parameters.notificationToCc","error":"action 'notificationToCc' parameter is required"},{"key":"parameters.notificationText","error":"action 'notificationText' parameter is required"}]}`},
	})
	if got := servertest.Actions(t, s, tok, "", mailed); len(got) != 0 {
		t.Fatalf("refused requests added actions: %v", got)
	}
	if got := servertest.Actions(t, s, tok, site, id); len(got) != 0 {
		t.Fatalf("refused requests added actions: %v", got)
	}
	servertest.RunSteps(t, s, tok, site, []servertest.Step{
		{Name: "checksum trimmed", Method: "POST", Path: p, Body: act("CHECKSUM", m{"checksumType": " sha512 "}), Want: 200, Resp: `{"message":"Actions saved"}`},
		{Name: "fulltext number", Method: "POST", Path: p, Body: act("FULLTEXT", m{"characterMax": -1}), Want: 200, Resp: `{"message":"Actions saved"}`},
		{Name: "resize auto", Method: "POST", Path: p, Body: act("RESIZE", m{"width": "auto", "height": 10, "outputType": ".PNG"}), Want: 200, Resp: `{"message":"Actions saved"}`},
	})
	got := servertest.Actions(t, s, tok, site, id)
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
		"PUBLISH", "QUEUE", "RESIZE", "WEBHOOK"}; !servertest.EqualStrings(types, want) {
		t.Fatalf("action types %v, want %v", types, want)
	}
	// A deep link has no content: its actions never run.
	other := servertest.AddDoc(t, s, tok, site, map[string]any{"deepLinkPath": "https://example.com/a.pdf"})
	for _, typ := range types {
		r := s.Do(http.MethodPost, "/documents/"+other+"/actions"+site, act(strings.ToLower(typ), nil), tok)
		if body := string(r.Body); (r.Status != 200 && r.Status != 400) || strings.Contains(body, "invalid action type") || strings.Contains(body, `"key":"type"`) {
			t.Errorf("%s: %d %s", typ, r.Status, body)
		}
	}
	for _, typ := range []string{"SHRED", "EVENT_BUS", "TEXTRACT", "OCR "} {
		want := `{"errors":[{"key":"type","error":"invalid action type '` + typ + `'"}]}`
		servertest.MustBody(t, s.Do(http.MethodPost, "/documents/"+other+"/actions"+site, act(typ, nil), tok), want)
	}
}
