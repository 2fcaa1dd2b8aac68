package node

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"quire/cluster"
	"quire/server"
	"quire/storage"
)

// TestServeAdmin_ServesEveryAdminPath: adminPaths (what serveForward
// hands to serveAdmin) and serveAdmin's cases agree. Every case decodes
// its body before it acts, so a body that is not JSON reaches each
// path's own case, which refuses it (400); a path without a case would
// reach the default, which answers 404 and names it.
func TestServeAdmin_ServesEveryAdminPath(t *testing.T) {
	n := &Node{}
	post := func(serve http.HandlerFunc, path, body string) (int, adminReply) {
		t.Helper()
		w := httptest.NewRecorder()
		serve(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		var rep adminReply
		if w.Code == http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
				t.Errorf("POST %s: the answer %q: %v", path, w.Body.String(), err)
			}
		}
		return w.Code, rep
	}
	paths := make([]string, 0, len(adminPaths))
	for p, ok := range adminPaths {
		if !ok {
			t.Errorf("adminPaths lists %s as false: list only the paths served", p)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		code, rep := post(n.serveForward, p, "not json")
		if code != http.StatusOK || rep.Err == nil || rep.Err.Status != http.StatusBadRequest {
			t.Errorf("POST %s with a body that is not JSON: %d %+v, want its own case's 400 (is it in serveAdmin's switch?)", p, code, rep.Err)
		}
	}
	// A path serveAdmin has no case for answers a clear error.
	code, rep := post(n.serveAdmin, "/no-such-admin-path", "{}")
	if code != http.StatusOK || rep.Err == nil || rep.Err.Status != http.StatusNotFound || !strings.Contains(rep.Err.Msg, `"/no-such-admin-path"`) || rep.Value != nil {
		t.Errorf("an admin path without a case: %d %+v", code, rep)
	}
	// One outside adminPaths is not handed to serveAdmin at all.
	if code, _ := post(n.serveForward, "/no-such-admin-path", "{}"); code != http.StatusNotFound {
		t.Errorf("serveForward of a path outside adminPaths: %d, want 404", code)
	}
}

// TestForwardAdmin_LeaderFailures: what a follower makes of each way the
// leader's forwarding service can answer. A leader that cannot be dialed
// or no longer leads is asked again (retry); one that went away after
// the request reached it, or whose answer is cut short, is a 503 the
// client can retry, never a 500; the leader's own refusal keeps its
// status.
func TestForwardAdmin_LeaderFailures(t *testing.T) {
	reply := func(rep adminReply) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { json.NewEncoder(w).Encode(rep) }
	}
	tests := []struct {
		name       string
		leader     http.HandlerFunc // nil: nothing listens at the address
		wantRetry  bool
		wantStatus int // of the *server.ClusterError; 0: no error
	}{
		{name: "not dialable", wantRetry: true},
		{name: "no longer the leader", leader: reply(adminReply{Err: &adminError{NotLeader: true, Msg: "not the leader"}}), wantRetry: true},
		{name: "connection dropped after the request", leader: func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, wantStatus: http.StatusServiceUnavailable},
		{name: "answer cut short", leader: func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"err":{"sta`)) }, wantStatus: http.StatusServiceUnavailable},
		{name: "answer not JSON", leader: func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		}, wantStatus: http.StatusServiceUnavailable},
		{name: "the leader refuses", leader: reply(adminReply{Err: &adminError{Status: http.StatusConflict, Msg: "node 'n1' leads the cluster"}}), wantStatus: http.StatusConflict},
		{name: "done", leader: reply(adminReply{})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var addr string
			client := &http.Client{Timeout: 10 * time.Second}
			if tc.leader != nil {
				srv := httptest.NewTLSServer(tc.leader)
				t.Cleanup(srv.Close)
				addr, client = strings.TrimPrefix(srv.URL, "https://"), srv.Client()
			} else {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr = l.Addr().String()
				l.Close()
			}
			n := &Node{join: joinState{client: client}}
			err, retry := n.forwardAdmin(context.Background(), addr, "/readmit", readmitRequest{NodeID: "n2", RaftAddress: "127.0.0.1:1"}, nil)
			if retry != tc.wantRetry {
				t.Errorf("retry %v, want %v (err %v)", retry, tc.wantRetry, err)
			}
			var ce *server.ClusterError
			switch {
			case tc.wantStatus == 0 && err != nil:
				t.Errorf("err %v, want none", err)
			case tc.wantStatus != 0 && !errors.As(err, &ce):
				t.Errorf("err %v (%T), want a ClusterError with status %d", err, err, tc.wantStatus)
			case tc.wantStatus != 0 && ce.Status != tc.wantStatus:
				t.Errorf("status %d (%s), want %d", ce.Status, ce.Msg, tc.wantStatus)
			}
		})
	}
}

// TestVerify_AFailedMarkIsNeverA500: a verification whose digest mark
// failed with an unknown outcome (Raft lost the lead, its queue was
// full, the node closes) is taken to the next leader (NotLeaderError,
// which onLeader retries) or answered 503, here and when forwarded from
// a follower (encodeAdminError); any other error is kept as it is.
func TestVerify_AFailedMarkIsNeverA500(t *testing.T) {
	refused := &storage.WriteRefusedError{Kind: storage.KindIOError, Reason: "disk"}
	for _, tc := range []struct {
		name    string
		err     error
		leading bool
		want    string // "retry", "503" or "same"
	}{
		{"lead lost", raft.ErrLeadershipLost, false, "retry"},
		{"lead lost, then won again", raft.ErrLeadershipLost, true, "503"},
		{"queue full", raft.ErrEnqueueTimeout, true, "503"},
		{"closing", cluster.ErrClosed, false, "503"},
		{"a refused write", refused, true, "same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := markErr(tc.err, tc.leading)
			var nl *cluster.NotLeaderError
			var ce *server.ClusterError
			switch tc.want {
			case "retry":
				if !errors.As(err, &nl) || !encodeAdminError(err).NotLeader {
					t.Fatalf("markErr(%v) = %v (%T), want a NotLeaderError", tc.err, err, err)
				}
			case "503":
				if !errors.As(err, &ce) || ce.Status != http.StatusServiceUnavailable || encodeAdminError(err).Status != http.StatusServiceUnavailable {
					t.Fatalf("markErr(%v) = %v (%T), want a 503 ClusterError", tc.err, err, err)
				}
			case "same":
				if err != tc.err {
					t.Fatalf("markErr(%v) = %v, want it unchanged", tc.err, err)
				}
			}
		})
	}
}
