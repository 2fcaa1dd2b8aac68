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
func TestPendingRendition_Lifecycle(t *testing.T) {
	tests := []struct {
		name     string
		status   string
		sha      func(cur string) string // the content the outcome says it read
		then     func(t *testing.T, d *DB, doc, art string)
		pending  bool // after the outcome
		afterwds bool // after then
	}{
		{name: "kept as the artifact", pending: true, then: func(t *testing.T, d *DB, doc, art string) {
			m, ch, _ := SmallContent([]byte("%PDF-1.7 searchable"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: art, ContentType: "application/pdf", ArtifactCategory: "OCR"}, Content: &m, Chunks: ch}})
		}},
		{name: "another artifact leaves it", pending: true, afterwds: true, then: func(t *testing.T, d *DB, doc, _ string) {
			m, ch, _ := SmallContent([]byte("other"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: "99999999-9999-4999-8999-999999999999", ContentType: "text/plain"}, Content: &m, Chunks: ch}})
		}},
		{name: "new content", pending: true, then: func(t *testing.T, d *DB, doc, _ string) {
			m, ch, _ := SmallContent([]byte("new text"))
			mustApply(t, d, OpUpdateDocument, "default", t0, UpdateDocument{DocumentID: doc, Content: &m, Chunks: ch})
		}},
		{name: "metadata change leaves it", pending: true, afterwds: true, then: func(t *testing.T, d *DB, doc, _ string) {
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
			d := mustOpen(t)
			doc := fmt.Sprintf("1111111%d-1111-4111-8111-111111111111", i)
			art := fmt.Sprintf("2222222%d-2222-4222-8222-222222222222", i)
			addActionDoc(t, d, doc, "OCR")
			ref := ActionRef{DocumentID: doc}
			mustApply(t, d, OpStartAction, "default", t0, ref)
			cur, err := d.GetDocument("default", doc)
			if err != nil {
				t.Fatal(err)
			}
			sha := cur.ContentSHA256
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
			if r.SiteID != "default" || r.DocumentID != doc || r.ArtifactID != art || r.ContentSHA256 != cur.ContentSHA256 || r.Action != ref {
				t.Fatalf("record = %+v", r)
			}
			tc.then(t, d, doc, art)
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
