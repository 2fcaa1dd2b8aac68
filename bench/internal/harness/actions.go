package harness

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// PipelineWorkers is quire's default number of pipeline workers.
const PipelineWorkers = 4

// ActionInfo is one action as GET /documents/{id}/actions shows it.
type ActionInfo struct {
	Type     string            `json:"type"`
	Status   string            `json:"status"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata"`
}

// FinalAction reports whether an action status is final.
func FinalAction(status string) bool {
	switch status {
	case "COMPLETE", "FAILED", "SKIPPED", "MAX_RETRIES_REACHED":
		return true
	}
	return false
}

// FindAction returns the last action of type typ, nil if none.
func FindAction(acts []ActionInfo, typ string) *ActionInfo {
	for i := len(acts) - 1; i >= 0; i-- {
		if acts[i].Type == typ {
			return &acts[i]
		}
	}
	return nil
}

// DocumentActions reads a document's actions.
func DocumentActions(ctx context.Context, srv *Server, id string) ([]ActionInfo, error) {
	var out struct {
		Actions []ActionInfo `json:"actions"`
	}
	err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/actions", nil, http.StatusOK, &out)
	return out.Actions, err
}

// WaitActions polls a document's actions every 100 ms until each has a
// final status, for at most limit.
func WaitActions(ctx context.Context, srv *Server, id string, limit time.Duration) ([]ActionInfo, error) {
	deadline := time.Now().Add(limit)
	for {
		if err := srv.CheckAlive(); err != nil {
			return nil, err
		}
		acts, err := DocumentActions(ctx, srv, id)
		if err != nil {
			return nil, err
		}
		if len(acts) > 0 && !slices.ContainsFunc(acts, func(a ActionInfo) bool { return !FinalAction(a.Status) }) {
			return acts, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("actions of %s not finished after %s: %+v", id, limit, acts)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WaitPipelineIdle waits until /readyz reports no queued or running
// actions.
func WaitPipelineIdle(ctx context.Context, srv *Server, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		if err := srv.CheckAlive(); err != nil {
			return 0, err
		}
		var body struct {
			Pipeline struct {
				Queued *int `json:"queued"`
			} `json:"pipeline"`
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.Base+"/readyz", nil)
		if resp, err := srv.Client.Do(req); err == nil {
			err := JSONDecode(resp, &body)
			if err == nil && body.Pipeline.Queued != nil && *body.Pipeline.Queued == 0 {
				return time.Since(start), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("pipeline not idle after %s", limit)
}
