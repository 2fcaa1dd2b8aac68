package node_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quire/node"
	"quire/quiretest"
	"quire/storage"
)

// cutOffApplier applies a keyed command and then answers that its
// outcome is unknown, once per key whose name starts with "cutoff": a
// forward whose connection broke after the leader applied it.
type cutOffApplier struct {
	storage.Applier
	mu   sync.Mutex
	done map[string]bool
}

func (a *cutOffApplier) Apply(ctx context.Context, c *storage.Command) (storage.Result, error) {
	res, err := a.Applier.Apply(ctx, c)
	if err != nil || c.Idem == nil || !strings.HasPrefix(c.Idem.Key, "cutoff") {
		return res, err
	}
	a.mu.Lock()
	first := !a.done[c.Idem.Key]
	a.done[c.Idem.Key] = true
	a.mu.Unlock()
	if first {
		return storage.Result{}, &storage.OutcomeUnknownError{Reason: "the test cut the answer off"}
	}
	return res, err
}

func (a *cutOffApplier) WriteState() storage.WriteState {
	if g, ok := a.Applier.(interface{ WriteState() storage.WriteState }); ok {
		return g.WriteState()
	}
	return storage.WriteState{Writable: true}
}

// A keyed create whose first run applied its command and whose answer
// never came (504) is completed by the client's resend: the resend runs
// the request again, every command answers its recorded result, and the
// answer is a replay (issue 44: such resends lacked Idempotent-Replayed).
// A first run that was answered is replayed from its record as before.
func TestKeyed_ResendAfterAnUnknownOutcomeIsMarkedReplayed(t *testing.T) {
	defer node.SetTestApplierWrap(func(a storage.Applier) storage.Applier {
		return &cutOffApplier{Applier: a, done: map[string]bool{}}
	})()
	s := quiretest.NewServer(t)
	for _, tt := range []struct {
		key         string
		firstStatus int
	}{
		{"cutoff-1", http.StatusGatewayTimeout},
		{"answered-1", http.StatusCreated},
	} {
		t.Run(tt.key, func(t *testing.T) {
			h := map[string]string{"Idempotency-Key": tt.key}
			body := map[string]any{"path": "replay/" + tt.key + ".txt", "content": tt.key}
			first := s.DoHeaders(http.MethodPost, "/documents", body, s.Admin(), h)
			if first.Status != tt.firstStatus {
				t.Fatalf("first run: %d %s, want %d", first.Status, first.Body, tt.firstStatus)
			}
			if first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("the first run is marked replayed")
			}
			again := s.DoHeaders(http.MethodPost, "/documents", body, s.Admin(), h)
			if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("resend: %d replayed=%q %s, want 201 and Idempotent-Replayed: true", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
			}
			third := s.DoHeaders(http.MethodPost, "/documents", body, s.Admin(), h)
			if third.Status != again.Status || string(third.Body) != string(again.Body) || third.Header.Get("Idempotent-Replayed") != "true" {
				t.Fatalf("third send: %d %q %s, want the resend's answer replayed: %s", third.Status, third.Header.Get("Idempotent-Replayed"), third.Body, again.Body)
			}
		})
	}
	r := s.Do(http.MethodGet, "/documents?limit=100", nil, s.Admin())
	if n := strings.Count(string(r.Body), `"documentId"`); n != 2 {
		t.Fatalf("%d documents, want 2: %s", n, r.Body)
	}
}
