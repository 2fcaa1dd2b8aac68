package intake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func publicWebhooks(c *quiretest.Config) { c.PublicWebhooks = true }

// addWebhook creates a webhook and returns its id.
func addWebhook(t *testing.T, s *quiretest.Server, tok, site string, body any) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/webhooks"+site, body, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	return quiretest.Str(t, r.JSON(t), "webhookId")
}

// post sends a payload to a webhook intake URL as a sender would: its own
// content type, no token unless given.
func post(t *testing.T, s *quiretest.Server, path, contentType string, body []byte, headers map[string]string) *quiretest.Response {
	t.Helper()
	h := map[string]string{"Content-Type": contentType}
	for k, v := range headers {
		h[k] = v
	}
	return s.DoHeaders(http.MethodPost, path, body, headers["Authorization"], h)
}

func TestWebhooks_Manage(t *testing.T) {
	s := quiretest.NewServer(t, publicWebhooks)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := addWebhook(t, s, tok, site.Query, map[string]any{"name": "scanner", "ttl": "3600",
				"tags": []map[string]any{{"key": "source", "value": "scanner"}}})
			r := s.Do(http.MethodGet, "/webhooks/"+id+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			w := r.JSON(t)
			wantURL := s.URL + "/public/webhooks/" + id
			if site.Name != "default" {
				wantURL += "?siteId=" + site.Name
			}
			for k, want := range map[string]string{"name": "scanner", "enabled": "true", "ttl": "3600", "webhookId": id,
				"userId": "admin", "url": wantURL, "siteId": site.Name} {
				if got := quiretest.Str(t, w, k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if quiretest.Str(t, w, "insertedDate") == "" {
				t.Errorf("no insertedDate: %s", r.Body)
			}

			r = s.Do(http.MethodGet, "/webhooks"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if hooks := quiretest.List(t, r.JSON(t), "webhooks"); len(hooks) != 1 || quiretest.Str(t, quiretest.Obj(t, hooks[0]), "webhookId") != id {
				t.Fatalf("list = %s", r.Body)
			}

			r = s.Do(http.MethodPatch, "/webhooks/"+id+site.Query, map[string]any{"enabled": "false"}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			servertest.MustBody(t, r, fmt.Sprintf(`{"message":"'%s' object updated"}`, id))
			r = s.Do(http.MethodGet, "/webhooks/"+id+site.Query, nil, tok)
			if got := quiretest.Str(t, r.JSON(t), "enabled"); got != "false" {
				t.Errorf("enabled after PATCH = %q", got)
			}
			if got := quiretest.Str(t, r.JSON(t), "name"); got != "scanner" {
				t.Errorf("PATCH without a name changed it to %q", got)
			}

			r = s.Do(http.MethodPost, "/webhooks/"+id+"/tags"+site.Query, map[string]any{"key": "dept", "values": []string{"a", "b"}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			servertest.MustBody(t, r, `{"message":"Created Tag 'dept'."}`)
			r = s.Do(http.MethodGet, "/webhooks/"+id+"/tags"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			tags := quiretest.List(t, r.JSON(t), "tags")
			if len(tags) != 2 {
				t.Fatalf("tags = %s", r.Body)
			}
			if tg := quiretest.Obj(t, tags[1]); quiretest.Str(t, tg, "key") != "dept" || len(quiretest.List(t, tg, "values")) != 2 || quiretest.Str(t, tg, "webhookId") != id {
				t.Errorf("second tag = %v", tg)
			}

			r = s.Do(http.MethodDelete, "/webhooks/"+id+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			servertest.MustBody(t, r, fmt.Sprintf(`{"message":"'%s' object deleted"}`, id))
			r = s.Do(http.MethodGet, "/webhooks/"+id+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusNotFound)
			servertest.MustBody(t, r, `{"message":"Webhook 'id' not found"}`)
		})
	}

	t.Run("sites are apart", func(t *testing.T) {
		id := addWebhook(t, s, tok, "?siteId=finance", map[string]any{"name": "f"})
		servertest.MustStatus(t, s.Do(http.MethodGet, "/webhooks/"+id, nil, tok), http.StatusNotFound)
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/webhooks/"+id, nil, tok), http.StatusNotFound)
		r := post(t, s, "/public/webhooks/"+id, "application/json", []byte(`{}`), nil)
		servertest.MustStatus(t, r, http.StatusNotFound)
		servertest.MustStatus(t, post(t, s, "/public/webhooks/"+id+"?siteId=finance", "application/json", []byte(`{}`), nil), http.StatusOK)
	})

	t.Run("governors only", func(t *testing.T) {
		writer := s.Token("joe", "finance")
		r := s.Do(http.MethodPost, "/webhooks?siteId=finance", map[string]any{"name": "x"}, writer)
		servertest.MustStatus(t, r, http.StatusUnauthorized)
		governor := s.Token("ann", "finance_govern")
		addWebhook(t, s, governor, "?siteId=finance", map[string]any{"name": "x"})
	})
}

func TestWebhooks_BadInput(t *testing.T) {
	s := quiretest.NewServer(t, publicWebhooks)
	tok := s.Admin()
	id := addWebhook(t, s, tok, "", map[string]any{"name": "w"})
	for _, tt := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"no name", "POST", "/webhooks", map[string]any{"enabled": "true"}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
		{"blank name on PATCH", "PATCH", "/webhooks/" + id, map[string]any{"name": " "}, 400, `{"errors":[{"key":"name","error":"'name' is required"}]}`},
		{"enabled not a boolean", "POST", "/webhooks", map[string]any{"name": "a", "enabled": "maybe"}, 400, `{"errors":[{"key":"enabled","error":"invalid 'enabled': \"true\" or \"false\""}]}`},
		{"ttl negative", "POST", "/webhooks", map[string]any{"name": "a", "ttl": "-1"}, 400, `{"errors":[{"key":"ttl","error":"'ttl' must be between 1 and 315360000 seconds"}]}`},
		{"ttl not a number", "POST", "/webhooks", map[string]any{"name": "a", "ttl": "soon"}, 400, ""},
		{"ttl too long", "POST", "/webhooks", map[string]any{"name": "a", "ttl": 1e12}, 400, ""},
		{"name too long", "POST", "/webhooks", map[string]any{"name": strings.Repeat("n", 300)}, 400, ""},
		{"invalid UTF-8", "POST", "/webhooks", []byte("{\"name\":\"a\xff\"}"), 400, ""},
		{"tag without key", "POST", "/webhooks/" + id + "/tags", map[string]any{"value": "v"}, 400, ""},
		{"unknown action", "POST", "/webhooks", map[string]any{"name": "a", "actions": []map[string]any{{"type": "NOPE"}}}, 400, ""},
		{"unknown webhook tags", "POST", "/webhooks/nope/tags", map[string]any{"key": "k"}, 404, `{"message":"Webhook 'id' not found"}`},
		{"unknown webhook PATCH", "PATCH", "/webhooks/nope", map[string]any{"name": "k"}, 404, `{"message":"Webhook 'id' not found"}`},
		{"paging token of another listing", "GET", "/webhooks?next=bXAvYQ", nil, 400, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tok)
			servertest.MustStatus(t, r, tt.status)
			if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
			}
		})
	}
	r := s.Do(http.MethodGet, "/webhooks?limit=100", nil, tok)
	if n := len(quiretest.List(t, r.JSON(t), "webhooks")); n != 1 {
		t.Errorf("refused requests left webhooks behind: %s", r.Body)
	}

	t.Run("maxWebhooks", func(t *testing.T) {
		servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/other/configuration", map[string]any{"maxWebhooks": "2"}, tok), http.StatusOK)
		addWebhook(t, s, tok, "?siteId=other", map[string]any{"name": "1"})
		addWebhook(t, s, tok, "?siteId=other", map[string]any{"name": "2"})
		r := s.Do(http.MethodPost, "/webhooks?siteId=other", map[string]any{"name": "3"}, tok)
		servertest.MustStatus(t, r, http.StatusTooManyRequests)
		servertest.MustBody(t, r, `{"message":"Reached max number of webhooks"}`)
	})
}

// TestWebhooks_Intake posts payloads the way real senders do and reads
// the documents back.
func TestWebhooks_Intake(t *testing.T) {
	s := quiretest.NewServer(t, publicWebhooks)
	tok := s.Admin()
	id := addWebhook(t, s, tok, "", map[string]any{"name": "github", "enabled": true,
		"tags":    []map[string]any{{"key": "source", "value": "github"}},
		"actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}}})
	xml := []byte(`<?xml version="1.0"?><order id="7"/>`)
	bin := bytes.Repeat([]byte{0, 1, 2, 0xff}, 300_000) // 1.2 MB: more than one chunk
	for _, tt := range []struct {
		name, route, contentType string
		body                     []byte
		token                    bool
	}{
		{"public JSON", "public", "application/json", []byte(`{"action":"opened","number":7,"text":"héllo"}`), false},
		{"public form", "public", "application/x-www-form-urlencoded", []byte(url.Values{"a": {"1"}, "b": {"x y"}}.Encode()), false},
		{"public XML", "public", "application/xml; charset=utf-8", xml, false},
		{"private binary", "private", "application/octet-stream", bin, true},
		{"private JSON, extra path", "private", "application/json", []byte(`{"k":"v"}`), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := "/" + tt.route + "/webhooks/" + id
			if strings.Contains(tt.name, "extra path") {
				path += "/github/push"
			}
			h := map[string]string{}
			if tt.token {
				h["Authorization"] = tok
			}
			r := post(t, s, path, tt.contentType, tt.body, h)
			servertest.MustStatus(t, r, http.StatusOK)
			doc := quiretest.Str(t, r.JSON(t), "documentId")
			r = s.Do(http.MethodGet, "/documents/"+doc, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			d := r.JSON(t)
			if got := quiretest.Str(t, d, "userId"); got != "webhook/github" {
				t.Errorf("userId = %q", got)
			}
			if got := quiretest.Str(t, d, "contentType"); got != tt.contentType {
				t.Errorf("contentType = %q, want %q", got, tt.contentType)
			}
			if got := quiretest.Str(t, d, "path"); !strings.HasPrefix(got, "webhooks/"+id) {
				t.Errorf("path = %q", got)
			}
			got := servertest.Download(t, s, tok, "", doc)
			if !bytes.Equal(got, tt.body) {
				t.Errorf("content differs from what was sent: %d bytes, want %d", len(got), len(tt.body))
			}
			r = s.Do(http.MethodGet, "/documents/"+doc+"/tags/source", nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if v := quiretest.Str(t, r.JSON(t), "value"); v != "github" {
				t.Errorf("tag source = %q", v)
			}
			r = s.Do(http.MethodGet, "/documents/"+doc+"/actions", nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if acts := quiretest.List(t, r.JSON(t), "actions"); len(acts) != 1 || quiretest.Str(t, quiretest.Obj(t, acts[0]), "type") != "CHECKSUM" {
				t.Errorf("actions = %s", r.Body)
			}
		})
	}

	t.Run("private without a token", func(t *testing.T) {
		servertest.MustStatus(t, post(t, s, "/private/webhooks/"+id, "application/json", []byte(`{}`), nil), http.StatusUnauthorized)
	})
	t.Run("unknown webhook", func(t *testing.T) {
		r := post(t, s, "/public/webhooks/nope", "application/json", []byte(`{}`), nil)
		servertest.MustStatus(t, r, http.StatusNotFound)
		servertest.MustBody(t, r, `{"message":"Webhook 'id' not found"}`)
	})
	t.Run("redirect_uri", func(t *testing.T) {
		before := countDocs(t, s, tok)
		req, err := http.NewRequest(http.MethodPost, s.URL+"/public/webhooks/"+id+"?redirect_uri="+url.QueryEscape("https://example.com/thanks?x=1"), strings.NewReader("a=1"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "https://example.com/thanks?x=1" {
			t.Fatalf("status %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		if n := countDocs(t, s, tok); n != before+1 {
			t.Errorf("documents %d → %d, want one more", before, n)
		}
		servertest.MustStatus(t, post(t, s, "/public/webhooks/"+id+"?redirect_uri=javascript:alert(1)", "application/json", []byte(`{}`), nil), http.StatusBadRequest)
	})
	t.Run("disabled", func(t *testing.T) {
		off := addWebhook(t, s, tok, "", map[string]any{"name": "off", "enabled": "false"})
		before := countDocs(t, s, tok)
		r := post(t, s, "/public/webhooks/"+off, "application/json", []byte(`{}`), nil)
		servertest.MustStatus(t, r, http.StatusTooManyRequests)
		servertest.MustBody(t, r, `{"message":"webhook is disabled"}`)
		if n := countDocs(t, s, tok); n != before {
			t.Errorf("a refused payload was stored: %d → %d", before, n)
		}
	})
	t.Run("expired", func(t *testing.T) {
		short := addWebhook(t, s, tok, "", map[string]any{"name": "short", "ttl": 1})
		for deadline := time.Now().Add(15 * time.Second); ; {
			r := post(t, s, "/public/webhooks/"+short, "application/json", []byte(`{}`), nil)
			if r.Status == http.StatusBadRequest {
				servertest.MustBody(t, r, `{"message":"webhook is expired"}`)
				break
			}
			servertest.MustStatus(t, r, http.StatusOK)
			if time.Now().After(deadline) {
				t.Fatal("a webhook with a ttl of 1 s still takes payloads after 15 s")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Run("too large", func(t *testing.T) {
		big := bytes.Repeat([]byte("x"), 16<<20+1)
		r := post(t, s, "/public/webhooks/"+id, "text/plain", big, nil)
		servertest.MustStatus(t, r, http.StatusBadRequest)
	})
}

func TestWebhooks_PublicOffByDefault(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	id := addWebhook(t, s, tok, "", map[string]any{"name": "w"})
	r := post(t, s, "/public/webhooks/"+id, "application/json", []byte(`{}`), nil)
	servertest.MustStatus(t, r, http.StatusNotFound)
	servertest.MustStatus(t, post(t, s, "/private/webhooks/"+id, "application/json", []byte(`{}`), map[string]string{"Authorization": tok}), http.StatusOK)
}

// TestWebhooks_IdempotencyKey: 320 posts from 32 clients make exactly
// 200 documents. 100 keys are each sent twice in a row, so that the two
// posts run at once (the applier decides in its transaction, not a read
// before it), and 20 once more at the end, after their first answer; a
// repeated key answers the first document, also after a restart. (It
// sent 1,000 posts with the 100 repeats 900 posts after their first,
// none of them racing it: 60 s of the package's wall; issue 45.)
func TestWebhooks_IdempotencyKey(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir, publicWebhooks)
	tok := s.Admin()
	id := addWebhook(t, s, tok, "", map[string]any{"name": "pay"})
	const distinct, racing, late = 200, 100, 20
	var keys []string
	for i := range distinct {
		keys = append(keys, fmt.Sprintf("evt-%04d", i))
		if i < racing {
			keys = append(keys, fmt.Sprintf("evt-%04d", i))
		}
	}
	for i := range late {
		keys = append(keys, fmt.Sprintf("evt-%04d", racing+i))
	}
	total := len(keys)
	ids := make([]string, total)
	var wg sync.WaitGroup
	work := make(chan int)
	var mu sync.Mutex
	var failures []string
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := s.DoHeaders(http.MethodPost, "/public/webhooks/"+id, fmt.Sprintf(`{"n":%d}`, i), "",
					map[string]string{"Content-Type": "application/json", "Idempotency-Key": keys[i]})
				if r.Status != http.StatusOK {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%d: %d %s", i, r.Status, r.Body))
					mu.Unlock()
					continue
				}
				var out struct {
					DocumentID string `json:"documentId"`
				}
				if err := json.Unmarshal(r.Body, &out); err != nil || out.DocumentID == "" {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%d: %s", i, r.Body))
					mu.Unlock()
					continue
				}
				ids[i] = out.DocumentID
			}
		}()
	}
	for i := range total {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d posts failed, first: %s", len(failures), failures[0])
	}
	byKey := map[string]string{}
	docs := map[string]bool{}
	for i, k := range keys {
		if prev, ok := byKey[k]; ok && prev != ids[i] {
			t.Errorf("key %s answered %s and %s", k, prev, ids[i])
		}
		byKey[k] = ids[i]
		docs[ids[i]] = true
	}
	if len(docs) != distinct {
		t.Errorf("%d distinct documentIds, want %d", len(docs), distinct)
	}
	if n := countDocs(t, s, tok); n != distinct {
		t.Errorf("%d documents stored, want %d", n, distinct)
	}

	s.Close()
	s = quiretest.StartServer(t, dir, publicWebhooks)
	r := s.DoHeaders(http.MethodPost, "/public/webhooks/"+id, `{"again":true}`, "",
		map[string]string{"Content-Type": "application/json", "Idempotency-Key": keys[0]})
	servertest.MustStatus(t, r, http.StatusOK)
	if got := quiretest.Str(t, r.JSON(t), "documentId"); got != byKey[keys[0]] {
		t.Errorf("after a restart the key answered %s, want %s", got, byKey[keys[0]])
	}
	if n := countDocs(t, s, s.Admin()); n != distinct {
		t.Errorf("after a restart: %d documents, want %d", n, distinct)
	}
}

// countDocs counts the default site's documents, page by page.
func countDocs(t *testing.T, s *quiretest.Server, tok string) int {
	t.Helper()
	n, next := 0, ""
	for i := 0; i < 100; i++ {
		path := "/documents?limit=1000"
		if next != "" {
			path += "&next=" + url.QueryEscape(next)
		}
		r := s.Do(http.MethodGet, path, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		m := r.JSON(t)
		n += len(quiretest.List(t, m, "documents"))
		next, _ = m["next"].(string)
		if next == "" {
			return n
		}
	}
	t.Fatal("more than 100 pages of documents")
	return n
}

// A webhook that names no actions gives its documents the site's default
// processing (processing.defaultActions; issue 46), one that names some
// exactly those (TestWebhooks_Intake).
func TestWebhooks_DefaultProcessing(t *testing.T) {
	s := quiretest.NewServer(t, publicWebhooks)
	tok := s.Admin()
	id := addWebhook(t, s, tok, "", map[string]any{"name": "plain", "enabled": true})
	for _, tt := range []struct {
		name    string
		setting any
		want    string
	}{
		{"the default (OCR, FULLTEXT: a JSON body is text, so no OCR)", nil, "FULLTEXT"},
		{"the site's list", []string{"FULLTEXT"}, "FULLTEXT"},
		{"none", []string{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.SetSiteConfig(t, s, tok, "", map[string]any{"processing": map[string]any{"defaultActions": tt.setting}})
			r := post(t, s, "/public/webhooks/"+id, "application/json", []byte(`{"n":1}`), nil)
			servertest.MustStatus(t, r, http.StatusOK)
			doc := quiretest.Str(t, r.JSON(t), "documentId")
			var types []string
			for _, a := range servertest.Actions(t, s, tok, "", doc) {
				types = append(types, quiretest.Str(t, a, "type"))
			}
			if got := strings.Join(types, " "); got != tt.want {
				t.Errorf("actions %q, want %q", got, tt.want)
			}
		})
	}
}
