package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

// pipelineWorkers is quire's default number of pipeline workers.
const pipelineWorkers = 4

// actionInfo is one action as GET /documents/{id}/actions shows it.
type actionInfo struct {
	Type     string            `json:"type"`
	Status   string            `json:"status"`
	Message  string            `json:"message"`
	Metadata map[string]string `json:"metadata"`
}

// finalAction reports whether an action status is final.
func finalAction(status string) bool {
	switch status {
	case "COMPLETE", "FAILED", "SKIPPED", "MAX_RETRIES_REACHED":
		return true
	}
	return false
}

// findAction returns the last action of type typ, nil if none.
func findAction(acts []actionInfo, typ string) *actionInfo {
	for i := len(acts) - 1; i >= 0; i-- {
		if acts[i].Type == typ {
			return &acts[i]
		}
	}
	return nil
}

// documentActions reads a document's actions.
func documentActions(ctx context.Context, srv *server, id string) ([]actionInfo, error) {
	var out struct {
		Actions []actionInfo `json:"actions"`
	}
	err := srv.doJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(id)+"/actions", nil, http.StatusOK, &out)
	return out.Actions, err
}

// waitActions polls a document's actions every 100 ms until each has a
// final status, for at most limit.
func waitActions(ctx context.Context, srv *server, id string, limit time.Duration) ([]actionInfo, error) {
	deadline := time.Now().Add(limit)
	for {
		if err := srv.checkAlive(); err != nil {
			return nil, err
		}
		acts, err := documentActions(ctx, srv, id)
		if err != nil {
			return nil, err
		}
		if len(acts) > 0 && !slices.ContainsFunc(acts, func(a actionInfo) bool { return !finalAction(a.Status) }) {
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

// waitPipelineIdle waits until /readyz reports no queued or running
// actions.
func waitPipelineIdle(ctx context.Context, srv *server, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		if err := srv.checkAlive(); err != nil {
			return 0, err
		}
		var body struct {
			Pipeline struct {
				Queued *int `json:"queued"`
			} `json:"pipeline"`
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.base+"/readyz", nil)
		if resp, err := srv.client.Do(req); err == nil {
			err := jsonDecode(resp, &body)
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
