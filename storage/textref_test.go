package storage

import (
	"testing"
)

// TestTextRef: a FULLTEXT record that names its text (the content's or
// the OCR text's first bytes) holds none and reads as that text; one whose
// OCR text is replaced or deleted keeps the text it had (filled in first);
// a reference a read cannot resolve is refused.
func TestTextRef(t *testing.T) {
	t.Parallel() // own store, no package or process state
	const doc = "77777777-7777-4777-8777-777777777777"
	tests := []struct {
		name string
		from string
		n    int64
		then func(t *testing.T, d *DB) // after both records are written
		want string
	}{
		{name: "content, whole", from: TextFromContent, n: 9, want: "some text"},
		{name: "content, cut", from: TextFromContent, n: 4, want: "some"},
		{name: "ocr, cut", from: TextOCR, n: 7, want: "Straße"},
		{name: "ocr replaced by hand", from: TextOCR, n: 7, want: "Straße", then: func(t *testing.T, d *DB) {
			mustApply(t, d, OpSetText, "default", t0, SetText{DocumentID: doc, Kind: TextOCR, Text: "other words"})
		}},
		{name: "ocr deleted", from: TextOCR, n: 7, want: "Straße", then: func(t *testing.T, d *DB) {
			mustApply(t, d, OpDeleteText, "default", t0, DeleteText{DocumentID: doc, Kind: TextOCR})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := mustOpen(t)
			addActionDoc(t, d, doc, "OCR", "FULLTEXT")
			cur, err := d.GetDocument("default", doc)
			if err != nil {
				t.Fatal(err)
			}
			sha := cur.ContentSHA256
			ocr := ActionRef{DocumentID: doc, Seq: 0}
			mustApply(t, d, OpStartAction, "default", t0, ocr)
			mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ocr, Status: ActionComplete,
				Texts: []TextRecord{{Kind: TextOCR, ContentSHA: sha, Text: "Straße 4711"}}})
			ft := ActionRef{DocumentID: doc, Seq: 1}
			mustApply(t, d, OpStartAction, "default", t0, ft)
			mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ft, Status: ActionComplete,
				Texts: []TextRecord{{Kind: TextFulltext, ContentSHA: sha, From: tc.from, Bytes: tc.n}}})
			if tc.then != nil {
				tc.then(t, d)
			}
			tr, err := d.Text("default", doc, TextFulltext)
			if err != nil || tr == nil || tr.Text != tc.want || tr.From != "" || tr.Bytes != 0 {
				t.Fatalf("Text = %+v %v, want the text %q", tr, err, tc.want)
			}
			views, err := d.ViewsForIndex([]DocRef{{Site: "default", ID: doc}}, func(string) bool { return false }, 1<<20)
			if err != nil || len(views) != 1 || views[0].Text != tc.want {
				t.Fatalf("the index reads %+v %v, want %q", views, err, tc.want)
			}
			raw, err := d.StoredText("default", doc, TextFulltext)
			if err != nil || raw == nil {
				t.Fatalf("stored: %v", err)
			}
			if detached := tc.then != nil; detached != (raw.Text != "") {
				t.Fatalf("stored record %+v: holds its text = %v, want %v", raw, raw.Text != "", detached)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		d := mustOpen(t)
		addActionDoc(t, d, doc, "FULLTEXT")
		ref := ActionRef{DocumentID: doc}
		mustApply(t, d, OpStartAction, "default", t0, ref)
		for _, bad := range []TextRecord{{Kind: TextFulltext, From: "elsewhere", Bytes: 3}, {Kind: TextOCR, From: TextFromContent, Bytes: 3},
			{Kind: TextFulltext, From: TextFromContent, Bytes: 3, Text: "two copies"}, {Kind: TextFulltext, From: TextFromContent, Bytes: -1}} {
			if _, err := d.Apply(t.Context(), MustCommand(OpFinishAction, "default", "joe", t0, FinishAction{ActionRef: ref, Status: ActionComplete, Texts: []TextRecord{bad}})); err == nil {
				t.Fatalf("%+v accepted", bad)
			}
		}
	})
}
