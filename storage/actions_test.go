package storage

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// addActionDoc creates a document with inline content and actions.
func addActionDoc(t *testing.T, d *DB, id string, types ...string) {
	t.Helper()
	m, ch, ok := SmallContent([]byte("some text"))
	if !ok {
		t.Fatal("content too large to inline")
	}
	var acts []Action
	for _, typ := range types {
		acts = append(acts, Action{Type: typ})
	}
	mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{
		Document: Document{DocumentID: id, Path: id + ".txt", ContentType: "text/plain"}, Content: &m, Chunks: ch, Actions: acts}}})
}

// hooked applies commands and returns the Result its OnCommit hooks got
// (Apply's own result carries the value only).
type hooked struct {
	d    *DB
	last Result
}

func newHooked(t *testing.T) *hooked {
	h := &hooked{d: mustOpen(t)}
	h.d.OnCommit(func(_ *Command, r Result) { h.last = r })
	return h
}

func (h *hooked) apply(t *testing.T, op Op, at time.Time, payload any) Result {
	t.Helper()
	res := mustApply(t, h.d, op, "default", at, payload)
	res.Touched, res.Queued = h.last.Touched, h.last.Queued
	return res
}

func touched(res Result, id string) bool {
	return slices.Contains(res.Touched, DocRef{Site: "default", ID: id})
}

func queued(res Result, id string) bool {
	return slices.ContainsFunc(res.Queued, func(q QueuedDoc) bool { return q.DocRef == DocRef{Site: "default", ID: id} })
}

// TestActions_IndexToldOnlyOfIndexedChanges: action steps, and an action
// outcome that changes only fields the search index does not read (the
// CHECKSUM action's checksum), do not re-queue the document for indexing;
// a change the index reads, or new text, does.
func TestActions_IndexToldOnlyOfIndexedChanges(t *testing.T) {
	t.Parallel() // own store, no package or process state
	h := newHooked(t)
	d := h.d
	id := "11111111-1111-4111-8111-111111111111"
	addActionDoc(t, d, id, "CHECKSUM", "FULLTEXT", "WEBHOOK")
	sum, typ := "abc", "SHA256"
	path := "moved/" + id + ".txt"
	steps := []struct {
		name string
		seq  int
		fin  FinishAction
		want bool
	}{
		{"checksum only", 0, FinishAction{Status: ActionComplete,
			Then: []Command{*MustCommand(OpUpdateDocument, "", "", t0, UpdateDocument{DocumentID: id, Checksum: &sum, ChecksumType: &typ})}}, false},
		{"new text to index", 1, FinishAction{Status: ActionComplete, Reindex: true,
			Texts: []TextRecord{{Kind: TextFulltext, Text: "words"}}}, true},
		{"path changed", 2, FinishAction{Status: ActionComplete,
			Then: []Command{*MustCommand(OpUpdateDocument, "", "", t0, UpdateDocument{DocumentID: id, Path: &path})}}, true},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			ref := ActionRef{DocumentID: id, Seq: s.seq}
			if res := h.apply(t, OpStartAction, t0, ref); touched(res, id) {
				t.Fatalf("start told the index: %v", res.Touched)
			}
			s.fin.ActionRef = ref
			if res := h.apply(t, OpFinishAction, t0, s.fin); touched(res, id) != s.want {
				t.Fatalf("finish told the index = %v, want %v (%v)", touched(res, id), s.want, res.Touched)
			}
		})
	}
	doc, err := d.GetDocument("default", id)
	if err != nil || doc.Checksum != sum || doc.Path != path {
		t.Fatalf("document after the actions: %+v %v", doc, err)
	}
}

// TestFinishAction_StartsNext: an outcome with Next starts the first
// runnable action of that document in the same transaction, as
// OpStartAction would (status, attempt count, the document no longer
// reported queued), and starts nothing it may not start yet.
func TestFinishAction_StartsNext(t *testing.T) {
	t.Parallel() // own store, no package or process state
	h := newHooked(t)
	d := h.d
	a, b, c := "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	addActionDoc(t, d, a, "CHECKSUM")
	addActionDoc(t, d, b, "FULLTEXT", "CHECKSUM")
	addActionDoc(t, d, c, "WEBHOOK")
	refA := ActionRef{DocumentID: a}
	mustApply(t, d, OpStartAction, "default", t0, refA)
	res := h.apply(t, OpFinishAction, t0, FinishAction{ActionRef: refA, Status: ActionComplete, Next: b})
	st, ok := res.Value.(*StartedAction)
	if !ok || st.Action == nil || st.Document == nil {
		t.Fatalf("result = %#v, want a started action", res.Value)
	}
	if st.Action.Seq != 0 || st.Action.Status != ActionRunning || st.Action.RetryCount != 1 || st.Action.StartDate == nil {
		t.Fatalf("started = %+v", st.Action)
	}
	if string(st.Content) != "some text" {
		t.Fatalf("content carried = %q", st.Content)
	}
	if len(st.Actions) != 2 || st.Actions[0].Status != ActionPending {
		t.Fatalf("actions before the start = %+v", st.Actions)
	}
	if queued(res, b) {
		t.Fatalf("started document reported queued: %v", res.Queued)
	}
	if stored, err := d.GetAction("default", ActionRef{DocumentID: b}); err != nil || stored.Status != ActionRunning {
		t.Fatalf("stored action of b = %+v %v", stored, err)
	}
	if acts, _ := d.GetActions("default", a); acts[0].Status != ActionComplete {
		t.Fatalf("a's action = %+v", acts[0])
	}

	// b's outcome starts its own next action (the worker stays on it).
	refB := ActionRef{DocumentID: b}
	res = h.apply(t, OpFinishAction, t0, FinishAction{ActionRef: refB, Status: ActionComplete, Next: b})
	if st, _ := res.Value.(*StartedAction); st == nil || st.Action == nil || st.Action.Seq != 1 || st.Action.Status != ActionRunning {
		t.Fatalf("self chain result = %#v", res.Value)
	}
	if queued(res, b) {
		t.Fatalf("started document reported queued: %v", res.Queued)
	}

	// c waits for a retry: nothing starts, the result says until when,
	// and c's state is untouched.
	refC := ActionRef{DocumentID: c}
	later := t0.Add(time.Minute)
	mustApply(t, d, OpStartAction, "default", t0, refC)
	mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: refC, Status: ActionWaitingForRetry, NextAttempt: &later})
	refB1 := ActionRef{DocumentID: b, Seq: 1}
	res = mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: refB1, Status: ActionComplete, Next: c})
	st, _ = res.Value.(*StartedAction)
	if st == nil || st.Action != nil || st.NotBefore == nil || !st.NotBefore.Equal(later) {
		t.Fatalf("waiting result = %#v", res.Value)
	}
	if stored, _ := d.GetAction("default", refC); stored.Status != ActionWaitingForRetry || stored.RetryCount != 1 {
		t.Fatalf("c after a refused start = %+v", stored)
	}

	// A document gone or without runnable actions: the outcome is still
	// recorded, nothing starts.
	mustApply(t, d, OpStartAction, "default", later, refC)
	res = mustApply(t, d, OpFinishAction, "default", later, FinishAction{ActionRef: refC, Status: ActionComplete, Next: "44444444-4444-4444-8444-444444444444"})
	if st, _ := res.Value.(*StartedAction); st == nil || st.Action != nil || st.Document != nil {
		t.Fatalf("missing next document: %#v", res.Value)
	}
	if stored, _ := d.GetAction("default", refC); stored.Status != ActionComplete {
		t.Fatalf("c's outcome = %+v", stored)
	}
}

// TestActions_NotificationNeedsSender: the transaction that would add a
// client's NOTIFICATION action refuses it while the site has no sender
// address (whatever the API checked before), on every command that adds
// actions; once the site has one, it is added.
func TestActions_NotificationNeedsSender(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	addActionDoc(t, d, "doc")
	notify := []Action{{Type: "NOTIFICATION"}}
	cmds := []struct {
		name    string
		op      Op
		payload any
	}{
		{"add actions", OpAddActions, AddActions{DocumentID: "doc", Actions: notify}},
		{"add document", OpAddDocuments, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "new", Path: "new.txt"}, Actions: notify}}}},
		{"update document", OpUpdateDocument, UpdateDocument{DocumentID: "doc", Actions: notify}},
	}
	for _, c := range cmds {
		t.Run(c.name, func(t *testing.T) {
			_, err := d.Apply(context.Background(), MustCommand(c.op, "default", "joe", t0, c.payload))
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Items) != 1 || ve.Items[0].Key != KeyNotificationEmail || ve.Items[0].Msg != MsgNotificationEmail {
				t.Fatalf("err = %v, want %s: %s", err, KeyNotificationEmail, MsgNotificationEmail)
			}
		})
	}
	if _, acts, err := d.ActionState("default", "doc"); err != nil || len(acts) != 0 {
		t.Fatalf("actions after refused commands: %v %v", acts, err)
	}
	mustApply(t, d, OpSetSiteConfig, "default", t0, SiteConfig{NotificationEmail: "dms@example.com"})
	mustApply(t, d, OpAddActions, "default", t0, AddActions{DocumentID: "doc", Actions: notify})
	if _, acts, err := d.ActionState("default", "doc"); err != nil || len(acts) != 1 || acts[0].Type != "NOTIFICATION" {
		t.Fatalf("actions with a sender: %v %v", acts, err)
	}
}
