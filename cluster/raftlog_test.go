package cluster

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestRaftLog_ExpectedMessagesAtDebug: what a healthy cluster says in
// its ordinary course (a join, a bootstrap, a follower catching up) is
// logged at DEBUG through the process's logger; the same messages in
// other circumstances, and everything else, keep Raft's level.
func TestRaftLog_ExpectedMessagesAtDebug(t *testing.T) {
	joined := func(id string) bool { return id == "n2" }
	newPeer := raft.Server{Suffrage: raft.Voter, ID: "n2", Address: "127.0.0.1:7002"}
	oldPeer := raft.Server{Suffrage: raft.Voter, ID: "n3", Address: "127.0.0.1:7003"}
	for _, tt := range []struct {
		name  string
		level hclog.Level
		msg   string
		args  []any
		want  string // the level logged, "" for none
	}{
		{"a new member's empty log", hclog.Warn, "failed to get previous log", []any{"previous-index", 8, "last-index", 0, "error", "log not found"}, ""},
		{"another previous-log failure", hclog.Warn, "failed to get previous log", []any{"previous-index", 8, "error", "disk I/O"}, "WARN"},
		{"sending older entries", hclog.Warn, "appendEntries rejected, sending older logs", []any{"peer", newPeer, "next", 1}, ""},
		{"the bootstrap's first election", hclog.Warn, "heartbeat timeout reached, starting election", []any{"last-leader-addr", "", "last-leader-id", ""}, ""},
		{"a leader lost", hclog.Warn, "heartbeat timeout reached, starting election", []any{"last-leader-addr", "127.0.0.1:7001", "last-leader-id", "n1"}, "WARN"},
		{"a member added a moment ago", hclog.Error, "failed to appendEntries to", []any{"peer", newPeer, "error", "remote error: tls: bad certificate"}, ""},
		{"a member of long standing", hclog.Error, "failed to appendEntries to", []any{"peer", oldPeer, "error", "remote error: tls: bad certificate"}, "ERROR"},
		{"heartbeats to a new member", hclog.Error, "failed to heartbeat to", []any{"peer", newPeer, "error", "EOF"}, ""},
		{"anything else", hclog.Error, "failed to take snapshot", []any{"error", "no space"}, "ERROR"},
		{"info under the warn level", hclog.Info, "entering follower state", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			l := newRaftLog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), "warn", joined)
			l.Named("raft").Log(tt.level, tt.msg, tt.args...)
			got := ""
			if line := strings.TrimSpace(buf.String()); line != "" {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("not the process's format: %q", line)
				}
				got, _ = m["level"].(string)
				if m["component"] != "raft" || m["msg"] != tt.msg {
					t.Errorf("line %s: want component raft and the message", line)
				}
			}
			if got != tt.want {
				t.Fatalf("logged at %q, want %q (%s)", got, tt.want, buf.String())
			}
		})
	}
}
