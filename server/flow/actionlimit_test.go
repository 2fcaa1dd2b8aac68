package flow_test

import (
	"fmt"
	"net/http"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// TestActions_ADocumentHoldsAtMostItsLimit: requests that each add the most
// actions a request may (storage.MaxActionsPerRequest) fill a document up
// to storage.MaxDocumentActions; one more action, alone or in a request
// that would cross the limit, is a 400 in FormKiQ's shape and writes
// nothing. Each action change reads all of a document's actions, so the
// list must not grow without bound.
func TestActions_ADocumentHoldsAtMostItsLimit(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	qr := s.Do(http.MethodPost, "/queues", map[string]any{"name": "Hold"}, tok)
	servertest.MustStatus(t, qr, http.StatusCreated)
	qid := quiretest.Str(t, qr.JSON(t), "queueId")
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "many-actions.txt", "content": "x"})
	// QUEUE actions wait in the queue, so nothing runs while the test
	// fills the document.
	actions := func(n int) map[string]any {
		var acts []map[string]any
		for range n {
			acts = append(acts, map[string]any{"type": "QUEUE", "queueId": qid})
		}
		return map[string]any{"actions": acts}
	}
	full := storage.MaxDocumentActions / storage.MaxActionsPerRequest
	for range full - 1 {
		servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/actions", actions(storage.MaxActionsPerRequest), tok), http.StatusOK)
	}
	refused := fmt.Sprintf(`{"errors":[{"key":"actions","error":"a document can hold at most %d actions"}]}`, storage.MaxDocumentActions)
	tests := []struct {
		name string
		add  int
		want int
		body string
	}{
		{"one short of the limit", storage.MaxActionsPerRequest - 1, http.StatusOK, ""},
		{"crossing the limit", 2, http.StatusBadRequest, refused},
		{"up to the limit", 1, http.StatusOK, ""},
		{"one more", 1, http.StatusBadRequest, refused},
	}
	for _, tc := range tests {
		r := s.Do(http.MethodPost, "/documents/"+id+"/actions", actions(tc.add), tok)
		if r.Status != tc.want || (tc.body != "" && string(r.Body) != tc.body) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, r.Status, r.Body, tc.want, tc.body)
		}
	}
	// Count what the document holds, page by page (bounded).
	n, next := 0, ""
	for range storage.MaxDocumentActions/100 + 2 {
		q := "?limit=100"
		if next != "" {
			q += "&next=" + next
		}
		r := s.Do(http.MethodGet, "/documents/"+id+"/actions"+q, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		m := r.JSON(t)
		n += len(quiretest.List(t, m, "actions"))
		next, _ = m["next"].(string)
		if next == "" {
			break
		}
	}
	if n != storage.MaxDocumentActions {
		t.Errorf("the document holds %d actions, want %d", n, storage.MaxDocumentActions)
	}
}
