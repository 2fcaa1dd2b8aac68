package storage

import (
	"context"
	"errors"
	"testing"
	"time"
)

// keyedAdd applies an AddDocuments of one new document id under an
// Idempotency-Key, as the server builds it for each attempt of a request
// (a retry picks a fresh document id: the record answers the first).
func keyedAdd(d *DB, user, key, hash, id string, at time.Time) (*AddDocumentsResult, error) {
	c := MustCommand(OpAddDocuments, "default", user, at, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: "idem/" + id}}}})
	c.Idem = &Idempotency{Key: key, Hash: hash}
	res, err := d.Apply(context.Background(), c)
	if err != nil {
		return nil, err
	}
	v, _ := res.Value.(*AddDocumentsResult)
	if v == nil {
		return nil, errors.New("no AddDocumentsResult")
	}
	return v, nil
}

func countRequestKeys(t *testing.T, d *DB) (recs, due int) {
	t.Helper()
	d.view(func(tx *tx) error {
		recs = len(tx.keys([]byte(pfxRequest)))
		due = len(tx.keys([]byte(pfxRequestDue)))
		return nil
	})
	return
}

func TestApplyOnce_SameKeyOneWriteSameAnswer(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444", "55555555-5555-4555-8555-555555555555"}
	first, err := keyedAdd(d, "joe", "k-1", "h1", ids[0], t0)
	if err != nil {
		t.Fatal(err)
	}
	// The retry (another id, a minute later) answers the first result and
	// writes nothing.
	again, err := keyedAdd(d, "joe", "k-1", "h1", ids[1], t0.Add(time.Minute))
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if len(again.DocumentIDs) != 1 || again.DocumentIDs[0] != ids[0] || again.Paths[ids[0]] != first.Paths[ids[0]] {
		t.Fatalf("retry answered %+v, want the first answer %+v", again, first)
	}
	if _, err := d.GetDocument("default", ids[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the retry wrote its document: %v", err)
	}
	// The same key with another request is refused, writing nothing.
	var ce *ConflictError
	if _, err := keyedAdd(d, "joe", "k-1", "h2", ids[2], t0.Add(2*time.Minute)); !errors.As(err, &ce) {
		t.Fatalf("same key, other request: %v, want a ConflictError", err)
	}
	if _, err := d.GetDocument("default", ids[2]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused request wrote its document: %v", err)
	}
	// Keys are per user: another caller's same key is its own request.
	if r, err := keyedAdd(d, "ann", "k-1", "h1", ids[3], t0.Add(3*time.Minute)); err != nil || r.DocumentIDs[0] != ids[3] {
		t.Fatalf("another user's key: %+v, %v, want a new document", r, err)
	}
	// 24 hours after the first write (by the commands' time) the key is
	// free again, and the expired records are pruned.
	r, err := keyedAdd(d, "joe", "k-1", "h2", ids[4], t0.Add(RequestKeyWindow))
	if err != nil || r.DocumentIDs[0] != ids[4] {
		t.Fatalf("after the window: %+v, %v, want a new document", r, err)
	}
	if recs, due := countRequestKeys(t, d); recs != 2 || due != 2 {
		t.Fatalf("request records %d, due keys %d, want 2 and 2 (joe's new one, ann's)", recs, due)
	}
	// A day after ann's too: her record is pruned by anyone's keyed write.
	if _, err := keyedAdd(d, "bob", "other", "h", "66666666-6666-4666-8666-666666666666", t0.Add(RequestKeyWindow+4*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if recs, due := countRequestKeys(t, d); recs != 2 || due != 2 {
		t.Fatalf("after pruning: request records %d, due keys %d, want 2 and 2 (joe's, bob's)", recs, due)
	}
}

// A failed write records nothing: its retry is decided again.
func TestApplyOnce_FailureRecordsNothing(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	id := "11111111-1111-4111-8111-111111111111"
	addDoc(t, d, "default", id, "x", t0)
	var ce *ConflictError
	if _, err := keyedAdd(d, "joe", "k", "h", id, t0); !errors.As(err, &ce) {
		t.Fatalf("duplicate id: %v, want a ConflictError", err)
	}
	if recs, due := countRequestKeys(t, d); recs != 0 || due != 0 {
		t.Fatalf("a failed write left %d records, %d due keys", recs, due)
	}
}

// A client-chosen documentId acts as an implicit key: the same create
// again answers the first while the document exists; another request
// with that id conflicts as before.
func TestApplyOnce_ImplicitDocumentKey(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	id := "11111111-1111-4111-8111-111111111111"
	add := func(hash string, at time.Time) error {
		c := MustCommand(OpAddDocuments, "default", "joe", at, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id}}}})
		c.Idem = &Idempotency{Key: "documentId " + id, Hash: hash, Doc: id, Implicit: true}
		_, err := d.Apply(context.Background(), c)
		return err
	}
	if err := add("h", t0); err != nil {
		t.Fatal(err)
	}
	if err := add("h", t0.Add(time.Minute)); err != nil {
		t.Fatalf("same create again: %v, want the first answer", err)
	}
	var ce *ConflictError
	if err := add("other", t0.Add(2*time.Minute)); !errors.As(err, &ce) {
		t.Fatalf("another create with the id: %v, want a ConflictError", err)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0.Add(3*time.Minute), DocumentRef{DocumentID: id})
	if err := add("h", t0.Add(4*time.Minute)); err != nil {
		t.Fatalf("create after the delete: %v", err)
	}
	if _, err := d.GetDocument("default", id); err != nil {
		t.Fatalf("the create after the delete wrote nothing: %v", err)
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	t.Parallel() // own store, no package or process state
	long := make([]byte, MaxIdempotencyKeyBytes+1)
	for i := range long {
		long[i] = 'a'
	}
	for _, tt := range []struct {
		k  string
		ok bool
	}{
		{"a", true}, {"order 42/retry-key_~", true}, {string(long[:MaxIdempotencyKeyBytes]), true},
		{"", false}, {string(long), false}, {"tab\there", false}, {"é", false}, {"nul\x00", false},
	} {
		if got := CheckIdempotencyKey(tt.k); got != tt.ok {
			t.Errorf("CheckIdempotencyKey(%q) = %v, want %v", tt.k, got, tt.ok)
		}
	}
}

// A keyed request of several commands: each is recorded under the key and
// its number, so a run of the request cut off after its first command is
// completed by its retry (the first command answers its result, the
// second is applied once); once the request's answer is recorded
// (OpFinishRequest), every command under the key answers that answer and
// applies nothing; another request under the key is refused.
func TestApplyOnce_NumberedCommandsAndFinalAnswer(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	ids := []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333", "44444444-4444-4444-8444-444444444444"}
	step := func(seq int, id string, at time.Time) (*AddDocumentsResult, error) {
		c := MustCommand(OpAddDocuments, "other-site", "", at, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: "idem/" + id}}}})
		c.Idem = &Idempotency{Key: "multi", Hash: "h", Seq: seq, Scoped: true, Site: "default", User: "joe"}
		res, err := d.Apply(context.Background(), c)
		if err != nil {
			return nil, err
		}
		v, _ := res.Value.(*AddDocumentsResult)
		return v, nil
	}
	// The first run applies its first command and is cut off.
	if _, err := step(0, ids[0], t0); err != nil {
		t.Fatal(err)
	}
	st, err := d.ReadRequest("default", "joe", "multi", t0)
	if err != nil || st == nil || st.Hash != "h" || st.Answer != nil {
		t.Fatalf("record after the first command: %+v, %v; want one of the request's, without an answer", st, err)
	}
	// Its retry: the first command answers the first result, the second
	// is applied.
	r0, err := step(0, ids[1], t0.Add(time.Second))
	if err != nil || r0.DocumentIDs[0] != ids[0] {
		t.Fatalf("retry, command 0: %+v, %v; want the first result (%s)", r0, err, ids[0])
	}
	r1, err := step(1, ids[2], t0.Add(time.Second))
	if err != nil || r1.DocumentIDs[0] != ids[2] {
		t.Fatalf("retry, command 1: %+v, %v; want it applied", r1, err)
	}
	if _, err := d.GetDocument("other-site", ids[1]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("command 0 applied twice: %v", err)
	}
	ans := RequestAnswer{Status: 201, ContentType: "application/json", Body: []byte(`{"documentId":"` + ids[0] + `"}`)}
	finish := func(hash string, a RequestAnswer) {
		t.Helper()
		c := MustCommand(OpFinishRequest, "default", "joe", t0.Add(2*time.Second), FinishRequest{Key: "multi", Hash: hash, Answer: a})
		if _, err := d.Apply(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	finish("other", RequestAnswer{Status: 200}) // another request's: changes nothing
	finish("h", ans)
	finish("h", RequestAnswer{Status: 500}) // a second answer: the first stays
	st, err = d.ReadRequest("default", "joe", "multi", t0.Add(time.Hour))
	if err != nil || st == nil || st.Answer == nil || st.Answer.Status != 201 || string(st.Answer.Body) != string(ans.Body) {
		t.Fatalf("record after the answer: %+v, %v; want the answer %+v", st, err, ans)
	}
	for seq := 0; seq < 3; seq++ {
		var rp *RequestReplayError
		if _, err := step(seq, ids[3], t0.Add(time.Minute)); !errors.As(err, &rp) || rp.Answer.Status != 201 {
			t.Fatalf("command %d after the answer: %v, want the recorded answer", seq, err)
		}
	}
	if _, err := d.GetDocument("other-site", ids[3]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a command applied after the request was answered: %v", err)
	}
	c := MustCommand(OpAddDocuments, "other-site", "", t0.Add(time.Minute), AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: ids[3], Path: "x"}}}})
	c.Idem = &Idempotency{Key: "multi", Hash: "h2", Scoped: true, Site: "default", User: "joe"}
	var ce *ConflictError
	if _, err := d.Apply(context.Background(), c); !errors.As(err, &ce) {
		t.Fatalf("another request under the key: %v, want a ConflictError", err)
	}
	// A day later the key is free.
	if st, err := d.ReadRequest("default", "joe", "multi", t0.Add(RequestKeyWindow)); err != nil || st != nil {
		t.Fatalf("after the window: %+v, %v; want none", st, err)
	}
}
