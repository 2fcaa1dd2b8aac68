package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
)

// procDoc is a document written to a `quire serve` process with an id
// of the client's (so an unanswered write can be looked for).
type procDoc struct {
	id, content string
}

func newProcDoc(tag string) procDoc {
	id := uuid.NewString()
	return procDoc{id: id, content: tag + "-" + id}
}

// post creates d through base within timeout; it returns the status (0:
// no answer, the outcome unknown) and the body.
func (d procDoc) post(c *http.Client, base, tok string, timeout time.Duration) (int, string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"documentId": d.id, "path": "p/" + d.id + ".txt", "content": d.content, "contentType": "text/plain"})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/documents", bytes.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Authorization", tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	var b [512]byte
	n, _ := resp.Body.Read(b[:])
	return resp.StatusCode, string(b[:n])
}

// on says whether base holds d whole (1), not at all (0), or answered
// something else (-1: an error to report).
func (d procDoc) on(c *http.Client, base, tok string) (int, string) {
	r := apiDo(c, http.MethodGet, base+"/documents/"+d.id+"/content", tok, nil)
	switch r.status {
	case http.StatusNotFound:
		return 0, ""
	case http.StatusOK:
		var m struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(r.body, &m) == nil && m.Content == d.content {
			return 1, ""
		}
	}
	return -1, fmt.Sprintf("%d %s", r.status, r.body)
}

// waitDocs waits until every document of want is on base, whole.
func waitDocs(t *testing.T, sc *serveCluster, base string, want []procDoc, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, d := range want {
		for {
			v, msg := d.on(sc.c, base, sc.tok)
			if v == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is not on %s: %s", d.id, base, msg)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// procLeaderAmong waits until one of the processes idx leads and all of them
// know it; it returns its index.
func procLeaderAmong(t *testing.T, sc *serveCluster, within time.Duration, idx ...int) int {
	t.Helper()
	lead := -1
	waitFor(t, "a leader", within, func() bool {
		lead = -1
		leaderID := ""
		for _, i := range idx {
			st, ok := clusterStatusOf(sc.c, sc.url(i), sc.tok)
			if !ok || st.LeaderID == "" || (leaderID != "" && st.LeaderID != leaderID) {
				return false
			}
			leaderID = st.LeaderID
			if st.State == "Leader" {
				lead = i
			}
		}
		return lead >= 0
	})
	return lead
}

// TestCluster_OldLeaderThatClearedItsLogSuffixStartsAgain is issue 28's
// item 1 with three `quire serve` processes: a leader appends entries no
// follower receives (both followers paused with SIGSTOP, writes sent to
// it), is SIGKILLed, the others elect a leader and move the log on; the
// old leader restarts, and Raft clears its log suffix (raft-wal
// DeleteRange of the tail); it is SIGKILLed and started again. With
// raft-wal v0.4.0 that start panicked ("sealed segment has no index
// block") at every attempt; it must serve and catch up, holding every
// acknowledged document and none of the writes it never committed.
//
// The paused followers are SIGKILLed and restarted rather than resumed
// with SIGCONT: the AppendEntries the leader sent them wait in their
// sockets' receive buffers, and a resumed follower may still accept them
// before its election, after which the new leader holds the old
// leader's entries and nothing is truncated. A restarted follower has
// only what it had made durable before the pause.
func TestCluster_OldLeaderThatClearedItsLogSuffixStartsAgain(t *testing.T) {
	sc := startServeCluster(t)
	var acked []procDoc
	for range 3 {
		d := newProcDoc("before")
		if st, body := d.post(sc.c, sc.url(0), sc.tok, 20*time.Second); st != http.StatusCreated {
			t.Fatalf("write through the leader: %d %s", st, body)
		}
		acked = append(acked, d)
	}
	var before statusView
	waitFor(t, "the followers to hold the leader's log", 20*time.Second, func() bool {
		var ok bool
		before, ok = clusterStatusOf(sc.c, sc.url(0), sc.tok)
		if !ok || before.State != "Leader" || before.CommitIndex != before.LastLogIndex {
			return false
		}
		for _, i := range []int{1, 2} {
			st, ok := clusterStatusOf(sc.c, sc.url(i), sc.tok)
			if !ok || st.LastLogIndex != before.LastLogIndex || st.CommitIndex != before.CommitIndex {
				return false
			}
		}
		return true
	})

	// Both followers paused; writes to the leader are appended to its log
	// and can never commit (it steps down once its lease runs out).
	sc.procs[1].signal(t, syscall.SIGSTOP)
	sc.procs[2].signal(t, syscall.SIGSTOP)
	var (
		unacked []procDoc
		mu      sync.Mutex
		wg      sync.WaitGroup
		answers []string
	)
	for range 4 {
		d := newProcDoc("paused")
		unacked = append(unacked, d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, body := d.post(sc.c, sc.url(0), sc.tok, 4*time.Second)
			mu.Lock()
			answers = append(answers, fmt.Sprintf("%d %.120s", st, body))
			mu.Unlock()
		}()
	}
	var grown statusView
	waitFor(t, "the leader to append entries its followers did not get", 5*time.Second, func() bool {
		var ok bool
		grown, ok = clusterStatusOf(sc.c, sc.url(0), sc.tok)
		return ok && grown.LastLogIndex > before.LastLogIndex
	})
	wg.Wait()
	for i, a := range answers {
		if a[:3] == "201" {
			t.Fatalf("write %d acknowledged by a leader whose followers are paused: %s", i, a)
		}
	}
	after, _ := clusterStatusOf(sc.c, sc.url(0), sc.tok)
	t.Logf("the old leader's log: %d entries before the pause, %d after (commit %d); answers %q",
		before.LastLogIndex, after.LastLogIndex, after.CommitIndex, answers)

	sc.procs[0].kill()
	sc.procs[1].kill()
	sc.procs[2].kill()
	sc.restart(t, 1, "n2-again")
	sc.restart(t, 2, "n3-again")
	lead := procLeaderAmong(t, sc, 30*time.Second, 1, 2)
	for range 3 {
		d := newProcDoc("after")
		if st, body := d.post(sc.c, sc.url(lead), sc.tok, 20*time.Second); st != http.StatusCreated {
			t.Fatalf("write through the new leader: %d %s", st, body)
		}
		acked = append(acked, d)
	}

	// The old leader comes back: the new leader's entries conflict with
	// its suffix, which Raft clears.
	n1 := sc.restart(t, 0, "n1-again")
	waitFor(t, "the old leader to clear its log suffix", 30*time.Second, func() bool { return n1.logHas("clearing log suffix") })
	waitDocs(t, sc, sc.url(0), acked, 30*time.Second)
	n1.kill()

	// And once more: the start that raft-wal v0.4.0 could not make.
	sc.restart(t, 0, "n1-third")
	ref, ok := clusterStatusOf(sc.c, sc.url(lead), sc.tok)
	if !ok {
		t.Fatal("the leader's status")
	}
	waitFor(t, "n1 to catch up after its restart", 30*time.Second, func() bool {
		st, ok := clusterStatusOf(sc.c, sc.url(0), sc.tok)
		return ok && st.LeaderID != "" && st.CommitIndex >= ref.CommitIndex
	})
	waitDocs(t, sc, sc.url(0), acked, 30*time.Second)
	for _, i := range []int{0, 1, 2} {
		for _, d := range unacked {
			if v, msg := d.on(sc.c, sc.url(i), sc.tok); v != 0 {
				t.Errorf("n%d holds %s, a write the paused leader never committed (%s)", i+1, d.id, msg)
			}
		}
	}
}
