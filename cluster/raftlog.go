package cluster

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// raftLog is hashicorp/raft's logger (hclog) written into the process's
// own slog logger, so a node logs in one format, and with what a healthy
// cluster says in its ordinary course (a new member's empty log, the
// first election of a bootstrap, a joining member that does not take
// Raft traffic until its Raft runs) at DEBUG instead of WARN or ERROR.
type raftLog struct {
	l     *slog.Logger
	name  string
	args  []any
	level *levelBox
	// joined reports whether a peer became a member a moment ago: the
	// leader's first messages to it fail until its Raft runs.
	joined func(id string) bool
}

type levelBox struct {
	mu sync.Mutex
	l  hclog.Level
}

func (b *levelBox) get() hclog.Level {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.l
}

func (b *levelBox) set(l hclog.Level) {
	b.mu.Lock()
	b.l = l
	b.mu.Unlock()
}

func newRaftLog(l *slog.Logger, level string, joined func(string) bool) *raftLog {
	lv := hclog.LevelFromString(level)
	if lv == hclog.NoLevel {
		lv = hclog.Warn
	}
	return &raftLog{l: l.With("component", "raft"), level: &levelBox{l: lv}, joined: joined}
}

// expected are Raft's messages that a healthy cluster logs in its
// ordinary course, and the condition under which each is expected: they
// are logged at DEBUG. Anything else keeps Raft's level.
var expected = []struct {
	msg  string
	when func(r *raftLog, args []any) bool
}{
	// A follower behind the leader (a new member, one restarted) answers
	// the leader's first append that it lacks the previous entry; the
	// leader then sends older entries.
	{"failed to get previous log", func(_ *raftLog, args []any) bool { return strings.Contains(argString(args, "error"), "log not found") }},
	{"appendEntries rejected, sending older logs", func(*raftLog, []any) bool { return true }},
	// The first election after a start, with no leader known yet.
	{"heartbeat timeout reached, starting election", func(_ *raftLog, args []any) bool {
		return argString(args, "last-leader-id") == "" && argString(args, "last-leader-addr") == ""
	}},
	// A member added a moment ago refuses Raft traffic until its own Raft
	// runs (it cannot check the peer's membership before): the leader's
	// first appends and heartbeats to it fail, and are retried.
	{"failed to appendEntries to", func(r *raftLog, args []any) bool { return r.joinedPeer(args) }},
	{"failed to heartbeat to", func(r *raftLog, args []any) bool { return r.joinedPeer(args) }},
}

// argString is the value of key in hclog's key-value args, as text.
func argString(args []any, key string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == key {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}

func (r *raftLog) joinedPeer(args []any) bool {
	if r.joined == nil {
		return false
	}
	for i := 0; i+1 < len(args); i += 2 {
		if k, ok := args[i].(string); ok && k == "peer" {
			if s, ok := args[i+1].(raft.Server); ok {
				return r.joined(string(s.ID))
			}
		}
	}
	return false
}

// levelOf is the level a message of Raft's is logged at.
func (r *raftLog) levelOf(level hclog.Level, msg string, args []any) hclog.Level {
	if level < hclog.Warn {
		return level
	}
	for _, e := range expected {
		if strings.HasPrefix(msg, e.msg) && e.when(r, args) {
			return hclog.Debug
		}
	}
	return level
}

var slogLevels = map[hclog.Level]slog.Level{
	hclog.Trace: slog.LevelDebug - 4, hclog.Debug: slog.LevelDebug, hclog.Info: slog.LevelInfo,
	hclog.Warn: slog.LevelWarn, hclog.Error: slog.LevelError,
}

func (r *raftLog) Log(level hclog.Level, msg string, args ...any) {
	level = r.levelOf(level, msg, args)
	if level < r.level.get() {
		return
	}
	sl, ok := slogLevels[level]
	if !ok {
		sl = slog.LevelInfo
	}
	all := make([]any, 0, len(r.args)+len(args)+2)
	if r.name != "" {
		all = append(all, "logger", r.name)
	}
	all = append(all, r.args...)
	for i := 0; i+1 < len(args); i += 2 {
		k, _ := args[i].(string)
		all = append(all, k, fmt.Sprint(args[i+1]))
	}
	r.l.Log(context.Background(), sl, msg, all...)
}

func (r *raftLog) Trace(msg string, args ...any) { r.Log(hclog.Trace, msg, args...) }
func (r *raftLog) Debug(msg string, args ...any) { r.Log(hclog.Debug, msg, args...) }
func (r *raftLog) Info(msg string, args ...any)  { r.Log(hclog.Info, msg, args...) }
func (r *raftLog) Warn(msg string, args ...any)  { r.Log(hclog.Warn, msg, args...) }
func (r *raftLog) Error(msg string, args ...any) { r.Log(hclog.Error, msg, args...) }

func (r *raftLog) IsTrace() bool { return r.level.get() <= hclog.Trace }
func (r *raftLog) IsDebug() bool { return r.level.get() <= hclog.Debug }
func (r *raftLog) IsInfo() bool  { return r.level.get() <= hclog.Info }
func (r *raftLog) IsWarn() bool  { return r.level.get() <= hclog.Warn }
func (r *raftLog) IsError() bool { return r.level.get() <= hclog.Error }

func (r *raftLog) ImpliedArgs() []any { return r.args }

func (r *raftLog) With(args ...any) hclog.Logger {
	c := *r
	c.args = append(append([]any{}, r.args...), args...)
	return &c
}

func (r *raftLog) Name() string { return r.name }

func (r *raftLog) Named(name string) hclog.Logger {
	c := *r
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (r *raftLog) ResetNamed(name string) hclog.Logger {
	c := *r
	c.name = name
	return &c
}

func (r *raftLog) SetLevel(level hclog.Level) { r.level.set(level) }
func (r *raftLog) GetLevel() hclog.Level      { return r.level.get() }

func (r *raftLog) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(r.StandardWriter(opts), "", 0)
}

func (r *raftLog) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return writerFunc(func(p []byte) (int, error) {
		r.Info(strings.TrimSpace(string(p)))
		return len(p), nil
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// joinGrace is how long after a member is added the leader's failures
// to reach it count as expected.
const joinGrace = time.Minute

// addedPeers remembers when this node (as leader) added each member.
type addedPeers struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (a *addedPeers) add(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string]time.Time{}
	}
	a.at[id] = time.Now()
}

func (a *addedPeers) recent(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	t, ok := a.at[id]
	return ok && time.Since(t) < joinGrace
}
