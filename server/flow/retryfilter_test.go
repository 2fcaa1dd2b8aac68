package flow_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestActions_RetryByType: POST /documents/{id}/actions/retry with Quire's
// {"actionTypes": [...]} retries the failed actions of those types only,
// and runs a finished one of those types again as a new action at the
// end; without a body it is FormKiQ's retry of every failed action.
// Both sites.
func TestActions_RetryByType(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			hook := servertest.NewReceiver(t, 404) // fails once, then answers 200
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "retry.txt", "content": "x",
				"actions": []map[string]any{
					{"type": "WEBHOOK", "parameters": map[string]any{"url": hook.URL}},
					{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
				}})
			for deadline := time.Now().Add(30 * time.Second); !servertest.EqualStrings(servertest.WaitActionsOnce(t, s, tok, site.Query, id), []string{"FAILED", "PENDING"}); {
				if time.Now().After(deadline) {
					t.Fatalf("statuses %v, want FAILED, PENDING", servertest.WaitActionsOnce(t, s, tok, site.Query, id))
				}
				time.Sleep(50 * time.Millisecond)
			}
			retry := "/documents/" + id + "/actions/retry" + site.Query
			// state waits (bounded) until no action can run (none
			// running, a pending one only behind a failed one) and lists
			// the actions as type:status.
			state := func(t *testing.T) string {
				t.Helper()
				var out []string
				for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
					out = out[:0]
					settled, blocked := true, false
					for _, a := range servertest.Actions(t, s, tok, site.Query, id) {
						st := quiretest.Str(t, a, "status")
						out = append(out, quiretest.Str(t, a, "type")+":"+st)
						switch st {
						case "FAILED", "MAX_RETRIES_REACHED":
							blocked = true
						case "RUNNING", "WAITING_FOR_RETRY":
							settled = false
						case "PENDING":
							settled = settled && blocked
						}
					}
					if settled || time.Now().After(deadline) {
						return strings.Join(out, ",")
					}
				}
			}
			for _, tt := range []struct {
				name   string
				body   any
				status int
				resp   string
				after  string // the document's actions once they settle
			}{
				{"an unknown type", map[string]any{"actionTypes": []string{"SHRED"}}, 400,
					`{"errors":[{"key":"actionTypes","error":"invalid action type 'SHRED'"}]}`, "WEBHOOK:FAILED,CHECKSUM:PENDING"},
				{"a type twice", map[string]any{"actionTypes": []string{"checksum", "CHECKSUM"}}, 400,
					`{"errors":[{"key":"actionTypes","error":"action type 'CHECKSUM' is listed twice"}]}`, "WEBHOOK:FAILED,CHECKSUM:PENDING"},
				{"not a list", map[string]any{"actionTypes": "OCR"}, 400, "", "WEBHOOK:FAILED,CHECKSUM:PENDING"},
				{"only a pending type: nothing to retry", map[string]any{"actionTypes": []string{"CHECKSUM"}}, 404,
					`{"message":"Failed action not found"}`, "WEBHOOK:FAILED,CHECKSUM:PENDING"},
				{"the failed type", map[string]any{"actionTypes": []string{"webhook"}}, 200,
					`{"message":"Actions retrying"}`, "WEBHOOK:FAILED_RETRY,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE"},
				{"a finished type runs again", map[string]any{"actionTypes": []string{"CHECKSUM"}}, 200,
					`{"message":"Actions retrying"}`, "WEBHOOK:FAILED_RETRY,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE,CHECKSUM:COMPLETE"},
				{"two finished types, in the order given", map[string]any{"actionTypes": []string{"WEBHOOK", "CHECKSUM"}}, 200,
					`{"message":"Actions retrying"}`, "WEBHOOK:FAILED_RETRY,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE,CHECKSUM:COMPLETE,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE"},
				{"FormKiQ's retry, nothing failed", nil, 404, `{"message":"Failed action not found"}`,
					"WEBHOOK:FAILED_RETRY,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE,CHECKSUM:COMPLETE,WEBHOOK:COMPLETE,CHECKSUM:COMPLETE"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(http.MethodPost, retry, tt.body, tok)
					servertest.MustStatus(t, r, tt.status)
					if tt.resp != "" {
						servertest.MustBody(t, r, tt.resp)
					}
					if got := state(t); got != tt.after {
						t.Errorf("actions %s, want %s", got, tt.after)
					}
				})
			}
			if n := hook.Calls.Load(); n != 3 {
				t.Errorf("the webhook was called %d times, want 3 (failed, retried, run again)", n)
			}
		})
	}
}
