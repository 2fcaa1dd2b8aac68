package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestPendingRendition_Lifecycle: an OCR outcome records the rendition
// it promises in its own transaction, of the document's current content
// only and only when COMPLETE; keeping the artifact, new content and
// deleting the document each remove the record in their transaction.
// Deleting the kept artifact makes the action say so (artifactStatus
// DELETED); deleting another artifact leaves it COMPLETE.
func TestPendingRendition_Lifecycle(t *testing.T) {
	t.Parallel() // own store, no package or process state
	tests := []struct {
		name     string
		status   string
		sha      func(cur string) string // the content the outcome says it read
		then     func(t *testing.T, d *DB, doc, art string)
		pending  bool // after the outcome
		afterwds bool // after then
		// artStatus is the action's metadata.artifactStatus after then
		// ("" when the action is gone with its document).
		artStatus string
	}{
		{name: "kept as the artifact", pending: true, artStatus: ArtifactComplete, then: func(t *testing.T, d *DB, doc, art string) {
			m, ch, _ := SmallContent([]byte("%PDF-1.7 searchable"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: art, ContentType: "application/pdf", ArtifactCategory: "OCR"}, Content: &m, Chunks: ch}})
		}},
		{name: "kept, then the artifact deleted", pending: true, artStatus: ArtifactDeleted, then: func(t *testing.T, d *DB, doc, art string) {
			m, ch, _ := SmallContent([]byte("%PDF-1.7 searchable"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: art, ContentType: "application/pdf", ArtifactCategory: "OCR"}, Content: &m, Chunks: ch}})
			mustApply(t, d, OpDeleteArtifact, "default", t0, ArtifactRef{DocumentID: doc, ArtifactID: art})
		}},
		{name: "another artifact deleted leaves it", pending: true, artStatus: ArtifactComplete, then: func(t *testing.T, d *DB, doc, art string) {
			for _, a := range []string{art, "99999999-9999-4999-8999-999999999999"} {
				m, ch, _ := SmallContent([]byte("%PDF-1.7 " + a))
				mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
					Document: Document{DocumentID: a, ContentType: "application/pdf"}, Content: &m, Chunks: ch}})
			}
			mustApply(t, d, OpDeleteArtifact, "default", t0, ArtifactRef{DocumentID: doc, ArtifactID: "99999999-9999-4999-8999-999999999999"})
		}},
		{name: "another artifact leaves it", pending: true, afterwds: true, artStatus: ArtifactPending, then: func(t *testing.T, d *DB, doc, _ string) {
			m, ch, _ := SmallContent([]byte("other"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: "99999999-9999-4999-8999-999999999999", ContentType: "text/plain"}, Content: &m, Chunks: ch}})
		}},
		{name: "new content", pending: true, artStatus: ArtifactFailed, then: func(t *testing.T, d *DB, doc, _ string) {
			m, ch, _ := SmallContent([]byte("new text"))
			mustApply(t, d, OpUpdateDocument, "default", t0, UpdateDocument{DocumentID: doc, Content: &m, Chunks: ch})
		}},
		{name: "metadata change leaves it", pending: true, afterwds: true, artStatus: ArtifactPending, then: func(t *testing.T, d *DB, doc, _ string) {
			p := "renamed.txt"
			mustApply(t, d, OpUpdateDocument, "default", t0, UpdateDocument{DocumentID: doc, Path: &p})
		}},
		{name: "document deleted", pending: true, then: func(t *testing.T, d *DB, doc, _ string) {
			mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: doc})
		}},
		{name: "outcome of replaced content", sha: func(string) string { return "0000" }},
		{name: "failed outcome", status: ActionFailed},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, doc, art, ref, content := startedOCR(t, fmt.Sprintf("1111111%d-1111-4111-8111-111111111111", i), fmt.Sprintf("2222222%d-2222-4222-8222-222222222222", i))
			sha := content
			if tc.sha != nil {
				sha = tc.sha(sha)
			}
			st := tc.status
			if st == "" {
				st = ActionComplete
			}
			mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ref, Status: st,
				Metadata: map[string]string{"artifactId": art}, Rendition: &PendingRendition{ArtifactID: art, ContentSHA256: sha}})
			r, err := d.PendingRendition("default", doc, art)
			if tc.pending != (err == nil) {
				t.Fatalf("pending after the outcome = %v (%v), want %v", err == nil, err, tc.pending)
			}
			if err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
			if !tc.pending {
				return
			}
			if r.SiteID != "default" || r.DocumentID != doc || r.ArtifactID != art || r.ContentSHA256 != content || r.Action != ref {
				t.Fatalf("record = %+v", r)
			}
			if a, err := d.GetAction("default", ref); err != nil || a.Metadata["artifactStatus"] != ArtifactPending {
				t.Fatalf("action after the outcome: %+v %v, want artifactStatus PENDING", a, err)
			}
			tc.then(t, d, doc, art)
			if tc.artStatus != "" {
				a, err := d.GetAction("default", ref)
				if err != nil || a.Metadata["artifactStatus"] != tc.artStatus {
					t.Fatalf("action afterwards: %+v %v, want artifactStatus %s", a, err, tc.artStatus)
				}
			}
			_, err = d.PendingRendition("default", doc, art)
			if tc.afterwds != (err == nil) {
				t.Fatalf("pending afterwards = %v (%v), want %v", err == nil, err, tc.afterwds)
			}
			n := 0
			if err := d.PendingRenditions(func(PendingRendition) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 1, false: 0}[tc.afterwds]; n != want {
				t.Fatalf("listed %d pending, want %d", n, want)
			}
		})
	}
}

// TestPendingRendition_BadArtifactID: an artifact id a key cannot hold is
// refused with the outcome (nothing is half-written).
func TestPendingRendition_BadArtifactID(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	doc := "11111111-1111-4111-8111-111111111111"
	addActionDoc(t, d, doc, "OCR")
	ref := ActionRef{DocumentID: doc}
	mustApply(t, d, OpStartAction, "default", t0, ref)
	_, err := d.Apply(context.Background(), MustCommand(OpFinishAction, "default", "joe", t0,
		FinishAction{ActionRef: ref, Status: ActionComplete, Rendition: &PendingRendition{ArtifactID: "a/b"}}))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("artifact id 'a/b': %v, want a validation error", err)
	}
	if a, _ := d.GetAction("default", ref); a == nil || a.Status != ActionRunning {
		t.Fatalf("action after the refused outcome: %+v", a)
	}
}

// TestFailRendition: OpFailRendition counts the rebuilds begun, keeps a
// failed one pending until it used its attempts, and gives it up (record
// gone, action FAILED with the message) at once when asked or once the
// attempts are used; a rendition no longer pending is left alone.
func TestFailRendition(t *testing.T) {
	t.Parallel() // own store, no package or process state
	tests := []struct {
		name    string
		steps   []FailRendition
		pending bool
		msg     string // artifactMessage when given up
	}{
		{name: "first make failed", steps: []FailRendition{{Message: "gs: broken", GiveUp: true}}, msg: "gs: broken"},
		{name: "one failed rebuild stays pending", steps: []FailRendition{{Attempt: true}, {Message: "gs: broken"}}, pending: true},
		{name: "interrupted rebuilds stay pending up to the bound", steps: []FailRendition{{Attempt: true}, {Attempt: true}, {Attempt: true}}, pending: true},
		{name: "a rebuild past the bound gives up", steps: []FailRendition{{Attempt: true}, {Message: "gs: one"}, {Attempt: true}, {Attempt: true}, {Attempt: true}},
			msg: "the searchable PDF was not made in 3 attempts: gs: one"},
		{name: "the last rebuild failing gives up", steps: []FailRendition{{Attempt: true}, {Attempt: true}, {Attempt: true}, {Message: "gs: three"}}, msg: "gs: three"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, doc, art, ref, sha := startedOCR(t, fmt.Sprintf("3333333%d-3333-4333-8333-333333333333", i), fmt.Sprintf("4444444%d-4444-4444-8444-444444444444", i))
			mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ref, Status: ActionComplete,
				Metadata: map[string]string{"artifactId": art}, Rendition: &PendingRendition{ArtifactID: art, ContentSHA256: sha}})
			for _, st := range tc.steps {
				st.DocumentID, st.ArtifactID = doc, art
				mustApply(t, d, OpFailRendition, "default", t0, st)
			}
			_, err := d.PendingRendition("default", doc, art)
			if tc.pending != (err == nil) {
				t.Fatalf("pending = %v (%v), want %v", err == nil, err, tc.pending)
			}
			a, err := d.GetAction("default", ref)
			if err != nil {
				t.Fatal(err)
			}
			want := map[bool]string{true: ArtifactPending, false: ArtifactFailed}[tc.pending]
			if a.Metadata["artifactStatus"] != want || a.Metadata["artifactMessage"] != tc.msg {
				t.Fatalf("action metadata %v, want artifactStatus %s artifactMessage %q", a.Metadata, want, tc.msg)
			}
			// Given up or not, a failure of a rendition no longer pending
			// (or never promised) changes nothing.
			mustApply(t, d, OpFailRendition, "default", t0, FailRendition{DocumentID: doc, ArtifactID: "55555555-5555-4555-8555-555555555555", GiveUp: true, Message: "x"})
			if b, _ := d.GetAction("default", ref); b.Metadata["artifactStatus"] != want {
				t.Fatalf("an unknown rendition's failure changed the action: %v", b.Metadata)
			}
		})
	}
}

// startedOCR opens a store with document doc whose OCR action has
// started; art is the id its outcome will promise. It returns the
// document's content hash too.
func startedOCR(t *testing.T, doc, art string) (d *DB, _, _ string, ref ActionRef, sha string) {
	t.Helper()
	d = mustOpen(t)
	addActionDoc(t, d, doc, "OCR")
	ref = ActionRef{DocumentID: doc}
	mustApply(t, d, OpStartAction, "default", t0, ref)
	cur, err := d.GetDocument("default", doc)
	if err != nil {
		t.Fatal(err)
	}
	return d, doc, art, ref, cur.ContentSHA256
}
