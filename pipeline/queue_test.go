package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/pipeline/mailer"
	"quire/storage"
)

// clock is a pipeline clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// diskDB opens a store in a temporary directory (a real Badger on disk).
func diskDB(t *testing.T) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: t.TempDir(), MinFreeBytes: -1, MinFreePercent: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// takeWithin takes the next due document, failing the test if none comes
// within 5 s.
func takeWithin(t *testing.T, p *Pipeline) storage.DocRef {
	t.Helper()
	got := make(chan storage.DocRef, 1)
	go func() {
		r, ok := p.take()
		if ok {
			got <- r
		}
		close(got)
	}()
	select {
	case r, ok := <-got:
		if !ok {
			t.Fatal("take: the pipeline stopped")
		}
		return r
	case <-time.After(5 * time.Second):
		p.Close(context.Background()) // ends the waiting take
		t.Fatal("take: nothing due after 5s")
		return storage.DocRef{}
	}
}

// TestScheduler_Order: the pipeline's in-memory queue hands out the most
// overdue document first, keeps a document's earliest time, never hands
// out a document a worker has, and hands it out again on release when it
// was queued meanwhile.
func TestScheduler_Order(t *testing.T) {
	ref := func(id string) storage.DocRef { return storage.DocRef{Site: "default", ID: id} }
	type step struct {
		op string // "schedule", "take", "release"
		id string
		at time.Duration // schedule: from the clock's start
	}
	cases := []struct {
		name  string
		steps []step
		busy  int // Status's queued + running at the end
	}{
		{"earliest first", []step{
			{"schedule", "a", 3 * time.Second}, {"schedule", "b", 2 * time.Second}, {"schedule", "c", time.Second},
			{"take", "c", 0}, {"take", "b", 0}, {"take", "a", 0}}, 3},
		{"a later time does not postpone a queued document", []step{
			{"schedule", "a", time.Second}, {"schedule", "b", 3 * time.Second}, {"schedule", "a", 5 * time.Second},
			{"take", "a", 0}, {"take", "b", 0}}, 2},
		{"an earlier time brings it forward, the stale entry is dropped", []step{
			{"schedule", "a", 5 * time.Second}, {"schedule", "b", 3 * time.Second}, {"schedule", "a", time.Second},
			{"take", "a", 0}, {"take", "b", 0}}, 2},
		{"queued while running waits for its release", []step{
			{"schedule", "a", time.Second}, {"take", "a", 0},
			{"schedule", "a", 2 * time.Second}, {"schedule", "b", 3 * time.Second},
			{"take", "b", 0}, {"release", "a", 0}, {"take", "a", 0}}, 2},
		{"released without being queued again is gone", []step{
			{"schedule", "a", time.Second}, {"take", "a", 0}, {"release", "a", 0},
			{"schedule", "b", time.Second}, {"take", "b", 0}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			start := clk.Now()
			p := New(memDB(t), nil, Config{Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			t.Cleanup(func() { p.Close(context.Background()) })
			for i, s := range c.steps {
				switch s.op {
				case "schedule":
					p.schedule(ref(s.id), start.Add(s.at))
				case "take":
					// Everything scheduled is due: the order is the queue's.
					clk.Set(start.Add(time.Minute))
					if got := takeWithin(t, p); got != ref(s.id) {
						t.Fatalf("step %d: took %s, want %s", i, got.ID, s.id)
					}
				case "release":
					p.release(ref(s.id))
				}
			}
			if _, busy, _ := p.Status(); busy != c.busy {
				t.Fatalf("Status busy = %d, want %d (nothing left queued)", busy, c.busy)
			}
		})
	}
}

// TestScheduler_PastIsNow: a document queued for a time already past is
// queued for now, so Status's oldest wait counts from when it was queued.
func TestScheduler_PastIsNow(t *testing.T) {
	clk := newClock()
	p := New(memDB(t), nil, Config{Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { p.Close(context.Background()) })
	p.schedule(storage.DocRef{Site: "default", ID: "a"}, clk.Now().Add(-time.Hour))
	clk.Set(clk.Now().Add(7 * time.Second))
	if _, busy, oldest := p.Status(); busy != 1 || oldest != 7*time.Second {
		t.Fatalf("Status = %d queued, oldest %s; want 1, 7s", busy, oldest)
	}
}

// mailStub is a TCP server that plays a broken mail server: it greets
// with greeting (or closes at once when empty) and counts connections.
type mailStub struct {
	addr  *net.TCPAddr
	conns atomic.Int32
}

func newMailStub(t *testing.T, greeting string) *mailStub {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	m := &mailStub{addr: ln.Addr().(*net.TCPAddr)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.conns.Add(1)
			if greeting != "" {
				c.Write([]byte(greeting + "\r\n"))
				bufio.NewReader(c).ReadString('\n') // the client's QUIT, or its close
			}
			c.Close()
		}
	}()
	return m
}

// addDoc adds document id with content and the actions of types.
func addDoc(t *testing.T, db *storage.DB, id string, acts ...storage.Action) {
	t.Helper()
	m, tail, err := storage.WriteContent(context.Background(), db, strings.NewReader("x"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(context.Background(), storage.MustCommand(storage.OpAddDocuments, "default", "joe", time.Now(), storage.AddDocuments{
		Docs: []storage.NewDocument{{Document: storage.Document{DocumentID: id, Path: id}, Content: &m, Chunks: tail, Actions: acts}},
	})); err != nil {
		t.Fatal(err)
	}
}

func params(t *testing.T, kv map[string]string) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(kv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitActions polls the actions of id until ok accepts them.
func waitActions(t *testing.T, db *storage.DB, id, want string, ok func([]storage.Action) bool) []storage.Action {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		acts, err := db.GetActions("default", id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(acts) {
			return acts
		}
		if time.Now().After(deadline) {
			var got []string
			for _, a := range acts {
				got = append(got, fmt.Sprintf("%s %s retry %d %s", a.Type, a.Status, a.RetryCount, a.Message))
			}
			t.Fatalf("%s: after 10s, want %s; have %q", id, want, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func checksumAction(t *testing.T) storage.Action {
	return storage.Action{Type: "CHECKSUM", Parameters: params(t, map[string]string{"checksumType": "SHA256"})}
}

func notifyAction(t *testing.T) storage.Action {
	return storage.Action{Type: "NOTIFICATION", MaxRetries: 3, Parameters: params(t, map[string]string{
		"notificationType": "email", "notificationToCc": "a@office.lan", "notificationSubject": "s", "notificationText": "t"})}
}

// TestPipeline_RetryBackoff: a transient failure (the mail server
// unreachable, or answering 4xx) gives WAITING_FOR_RETRY with a next
// attempt RetryBase, then 2 × RetryBase after the failure; the attempt is
// not made before it is due; after maxRetries attempts the action is
// MAX_RETRIES_REACHED and the actions after it stay PENDING. A permanent
// failure (5xx) fails at the first attempt.
func TestPipeline_RetryBackoff(t *testing.T) {
	const base = time.Minute
	cases := []struct {
		name     string
		greeting string // the mail server's first line ("": it hangs up)
		final    string
		attempts int
		msg      string
	}{
		{"server hangs up", "", storage.ActionMaxRetries, 3, "mail server: "},
		{"server busy 421", "421 try later", storage.ActionMaxRetries, 3, "mail server answered 421"},
		{"server refuses 554", "554 no service", storage.ActionFailed, 1, "mail server answered 554"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stub := newMailStub(t, c.greeting)
			clk := newClock()
			db := diskDB(t)
			p := startPipeline(t, db, db, Config{Workers: 1, RetryBase: base, Now: clk.Now,
				Engines: Engines{SMTP: mailer.Config{Host: "127.0.0.1", Port: stub.addr.Port, From: "quire@office.lan"}}})
			// The store refuses NOTIFICATION actions on a site without a
			// sender address.
			if _, err := db.Apply(context.Background(), storage.MustCommand(storage.OpSetSiteConfig, "default", "joe", time.Now(),
				storage.SiteConfig{NotificationEmail: "quire@office.lan"})); err != nil {
				t.Fatal(err)
			}
			addDoc(t, db, "d1", checksumAction(t), notifyAction(t), checksumAction(t))

			wantNext := clk.Now()
			for attempt := 1; attempt <= c.attempts; attempt++ {
				last := attempt == c.attempts
				acts := waitActions(t, db, "d1", fmt.Sprint("attempt ", attempt), func(a []storage.Action) bool {
					return len(a) == 3 && a[1].RetryCount == attempt &&
						(a[1].Status == storage.ActionWaitingForRetry || !storage.ActionRunnable(a[1].Status))
				})
				n := acts[1]
				if acts[0].Status != storage.ActionComplete {
					t.Fatalf("first action %s, want COMPLETE before the second ran", acts[0].Status)
				}
				if !strings.Contains(n.Message, c.msg) {
					t.Fatalf("attempt %d message %q, want it to contain %q", attempt, n.Message, c.msg)
				}
				if got := int(stub.conns.Load()); got != attempt {
					t.Fatalf("attempt %d: the mail server saw %d connections", attempt, got)
				}
				if last {
					if n.Status != c.final || n.NextAttempt != nil {
						t.Fatalf("after %d attempts: %s next %v, want %s and no next attempt", attempt, n.Status, n.NextAttempt, c.final)
					}
					if acts[2].Status != storage.ActionPending {
						t.Fatalf("the action after a %s one is %s, want PENDING", n.Status, acts[2].Status)
					}
					break
				}
				wantNext = wantNext.Add(base << (attempt - 1))
				if n.Status != storage.ActionWaitingForRetry || n.NextAttempt == nil || !n.NextAttempt.Equal(wantNext) {
					t.Fatalf("attempt %d: %s next %v, want WAITING_FOR_RETRY next %s", attempt, n.Status, n.NextAttempt, wantNext)
				}
				// Not before it is due: another document's action, due now,
				// runs on the single worker while this one waits.
				other := fmt.Sprint("o", attempt)
				addDoc(t, db, other, checksumAction(t))
				waitActions(t, db, other, "COMPLETE", func(a []storage.Action) bool {
					return len(a) == 1 && a[0].Status == storage.ActionComplete
				})
				if got := int(stub.conns.Load()); got != attempt {
					t.Fatalf("the retry ran before its time: %d connections after attempt %d", got, attempt)
				}
				clk.Set(wantNext)
				select { // wake the worker: the clock moved
				case p.wake <- struct{}{}:
				default:
				}
			}
		})
	}
}

// TestPipeline_DocumentOrder: a document's actions run one after the
// other in their order, each started after the one before completed.
func TestPipeline_DocumentOrder(t *testing.T) {
	db := diskDB(t)
	var mu sync.Mutex
	var seen []string
	// An action starts by OpStartAction, or by the OpFinishAction of the
	// one before it (FinishAction.Next).
	db.OnCommit(func(c *storage.Command, res storage.Result) {
		var started string
		switch c.Op {
		case storage.OpStartAction:
			var ref storage.ActionRef
			if err := json.Unmarshal(c.Data, &ref); err != nil {
				t.Errorf("start payload: %v", err)
				return
			}
			started = fmt.Sprintf("%s/%d", ref.DocumentID, ref.Seq)
		case storage.OpFinishAction:
			sa, ok := res.Value.(*storage.StartedAction)
			if !ok || sa.Action == nil || sa.Document == nil {
				return
			}
			started = fmt.Sprintf("%s/%d", sa.Document.DocumentID, sa.Action.Seq)
		default:
			return
		}
		mu.Lock()
		seen = append(seen, started)
		mu.Unlock()
	})
	// The documents are queued before the single worker starts.
	addDoc(t, db, "d1", checksumAction(t), checksumAction(t), checksumAction(t))
	addDoc(t, db, "d2", checksumAction(t))
	startPipeline(t, db, db, Config{Workers: 1})
	for _, id := range []string{"d1", "d2"} {
		waitActions(t, db, id, "all COMPLETE", func(a []storage.Action) bool {
			for _, x := range a {
				if x.Status != storage.ActionComplete {
					return false
				}
			}
			return len(a) > 0
		})
	}
	acts, err := db.GetActions("default", "d1")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(acts); i++ {
		if acts[i].StartDate.Before(*acts[i-1].CompletedDate) {
			t.Fatalf("action %d started at %s, before action %d completed at %s", i, acts[i].StartDate, i-1, acts[i-1].CompletedDate)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Each document's actions start in their order (the order between
	// documents is TestScheduler_Order's).
	var d1 []string
	for _, x := range seen {
		if strings.HasPrefix(x, "d1/") {
			d1 = append(d1, x)
		}
	}
	want := fmt.Sprintf("d1/%d d1/%d d1/%d", acts[0].Seq, acts[1].Seq, acts[2].Seq)
	if strings.Join(d1, " ") != want || acts[0].Seq >= acts[1].Seq || acts[1].Seq >= acts[2].Seq {
		t.Fatalf("starts %q, want d1's actions in the order %s", seen, want)
	}
}
