package flow_test

import (
	"fmt"
	"net/http"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// TestActions_ADocumentHoldsAtMostItsLimit: requests that add actions fill
// a document up to storage.MaxDocumentActions; one more action, alone or
// in a request that would cross the limit, is a 400 in FormKiQ's shape
// and writes nothing. Each action change reads all of a document's
// actions, so the list must not grow without bound. The site's default
// processing of new content is not refused for it: a new version of a
// full document is taken, with its default action.
func TestActions_ADocumentHoldsAtMostItsLimit(t *testing.T) {
	s := quiretest.NewServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	qr := s.Do(http.MethodPost, "/queues", map[string]any{"name": "Hold"}, tok)
	servertest.MustStatus(t, qr, http.StatusCreated)
	qid := quiretest.Str(t, qr.JSON(t), "queueId")
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "many-actions.txt", "content": "x"})
	count := func(t *testing.T) int {
		t.Helper()
		n, next := 0, ""
		for range storage.MaxDocumentActions/100 + 3 { // bounded paging
			q := "?limit=100"
			if next != "" {
				q += "&next=" + next
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/actions"+q, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			m := r.JSON(t)
			n += len(quiretest.List(t, m, "actions"))
			if next, _ = m["next"].(string); next == "" {
				break
			}
		}
		return n
	}
	// QUEUE actions wait in the queue, so nothing runs while the test
	// fills the document.
	actions := func(n int) map[string]any {
		var acts []map[string]any
		for range n {
			acts = append(acts, map[string]any{"type": "QUEUE", "queueId": qid})
		}
		return map[string]any{"actions": acts}
	}
	have := count(t) // the create's default processing
	for have+storage.MaxActionsPerRequest < storage.MaxDocumentActions {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/actions", actions(storage.MaxActionsPerRequest), tok), http.StatusOK)
		have += storage.MaxActionsPerRequest
	}
	room := storage.MaxDocumentActions - have // 1 to MaxActionsPerRequest
	refused := fmt.Sprintf(`{"errors":[{"key":"actions","error":"a document can hold at most %d actions"}]}`, storage.MaxDocumentActions)
	tests := []struct {
		name      string
		method    string
		path      string
		body      any
		want      int
		resp      string
		holdAfter int
	}{
		{"crossing the limit", "POST", "/documents/" + id + "/actions", actions(room + 1), http.StatusBadRequest, refused, have},
		{"up to the limit", "POST", "/documents/" + id + "/actions", actions(room), http.StatusOK, "", storage.MaxDocumentActions},
		{"one more", "POST", "/documents/" + id + "/actions", actions(1), http.StatusBadRequest, refused, storage.MaxDocumentActions},
		{"a new version, with its default processing", "PATCH", "/documents/" + id, map[string]any{"content": "new words"}, http.StatusOK, "", storage.MaxDocumentActions + 1},
		{"one more after it", "POST", "/documents/" + id + "/actions", actions(1), http.StatusBadRequest, refused, storage.MaxDocumentActions + 1},
	}
	for _, tc := range tests {
		r := s.Do(tc.method, tc.path, tc.body, tok)
		if r.Status != tc.want || (tc.resp != "" && string(r.Body) != tc.resp) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.want, tc.resp)
		}
		if n := count(t); n != tc.holdAfter {
			t.Errorf("%s: the document holds %d actions, want %d", tc.name, n, tc.holdAfter)
		}
	}
}
