package storage

import (
	"errors"
	"fmt"
	"testing"
)

// TestThumbnails_Walk: in a store written before
// RulesThumbnailsWithContent, the walk (ThumbnailWalk, OpQueueThumbnails
// steps of a few documents) names an earlier thumbnail of a document's
// current content, records a pending one for a PDF, an image and an
// office file with a PDF rendition, leaves alone a text file, a document
// with a pending record and one whose earlier thumbnail shows other
// content only by queuing it; it then has ended, and a step naming
// documents that meanwhile have one or are gone changes nothing.
func TestThumbnails_Walk(t *testing.T) {
	t.Parallel() // own store, no package or process state
	const (
		adopt  = "33333333-0000-4000-8000-000000000001"
		pic    = "33333333-0000-4000-8000-000000000002"
		office = "33333333-0000-4000-8000-000000000003"
		text   = "33333333-0000-4000-8000-000000000004"
		recent = "33333333-0000-4000-8000-000000000005"
		stale  = "33333333-0000-4000-8000-000000000006"
		docx   = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	)
	d := mustOpen(t)
	old := func(id, ct, body string) {
		nd := newDocWith(t, id, ct, []byte(body))
		nd.DefaultActions = false
		applyWithRules(t, d, OpAddDocuments, RulesDefaultsByType, AddDocuments{Docs: []NewDocument{nd}})
	}
	artifact := func(doc, id, category, ct, body string, meta ...Metadata) {
		a := newDocWith(t, id, ct, []byte(body))
		a.Document.Path, a.DefaultActions, a.Document.ArtifactCategory, a.Document.Metadata = "", false, category, meta
		applyWithRules(t, d, OpAddArtifact, RulesDefaultsByType, AddArtifact{DocumentID: doc, Artifact: a})
	}
	sha := func(id string) string {
		x, err := d.GetDocument("default", id)
		if err != nil {
			t.Fatal(err)
		}
		return x.ContentSHA256
	}
	old(adopt, "application/pdf", "%PDF-1.7 adopt")
	artifact(adopt, "44444444-0000-4000-8000-000000000001", ThumbnailCategory, "image/png", "\x89PNG earlier", Metadata{Key: "thumbnailOf", Value: sha(adopt)})
	old(pic, "image/png", "\x89PNG picture")
	old(office, docx, "PK docx")
	artifact(office, "44444444-0000-4000-8000-000000000003", "RENDITION", "application/pdf", "%PDF-1.7 rendition")
	old(text, "text/plain", "just text")
	mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{newDocWith(t, recent, "application/pdf", []byte("%PDF-1.7 recent"))}})
	old(stale, "application/pdf", "%PDF-1.7 stale")
	artifact(stale, "44444444-0000-4000-8000-000000000006", ThumbnailCategory, "image/png", "\x89PNG of other content", Metadata{Key: "thumbnailOf", Value: "0000"})
	if list, err := d.PendingThumbnails(10); err != nil || len(list) != 1 || list[0].DocumentID != recent {
		t.Fatalf("before the walk: pending %+v, %v; want only %s's", list, err, recent)
	}

	var total QueueThumbnailsResult
	steps := 0
	for ; steps < 20; steps++ {
		site, step, err := d.ThumbnailWalk(2, 64)
		if err != nil {
			t.Fatal(err)
		}
		if step == nil {
			break
		}
		res, err := d.Apply(t.Context(), MustCommand(OpQueueThumbnails, site, "system", t0, *step))
		if err != nil {
			t.Fatal(err)
		}
		r := res.Value.(QueueThumbnailsResult)
		total.Queued += r.Queued
		total.Adopted += r.Adopted
	}
	if steps < 3 || steps >= 20 {
		t.Fatalf("the walk of 6 documents and 3 artifacts, 2 at a time, took %d steps", steps)
	}
	if total != (QueueThumbnailsResult{Queued: 3, Adopted: 1}) {
		t.Fatalf("the walk did %+v, want 3 queued and 1 adopted", total)
	}
	if x, err := d.GetDocument("default", adopt); err != nil || x.ThumbnailID != "44444444-0000-4000-8000-000000000001" {
		t.Fatalf("adopted thumbnail %+v, %v", x, err)
	}
	list, err := d.PendingThumbnails(10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range list {
		got[p.DocumentID] = fmt.Sprintf("%s|%s", p.ContentSHA256, p.Rendition)
	}
	want := map[string]string{
		pic: sha(pic) + "|", office: sha(office) + "|44444444-0000-4000-8000-000000000003",
		recent: sha(recent) + "|", stale: sha(stale) + "|",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pending after the walk:\n got %v\nwant %v", got, want)
	}
	if _, step, err := d.ThumbnailWalk(2, 64); err != nil || step != nil {
		t.Fatalf("a walk that ended goes on: %+v, %v", step, err)
	}

	// A step naming documents that meanwhile have a thumbnail or a
	// pending one, or are gone, writes nothing.
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: text})
	res := mustApply(t, d, OpQueueThumbnails, "default", t0, QueueThumbnails{DocumentIDs: []string{adopt, pic, text, "55555555-0000-4000-8000-000000000000"}, Done: true})
	if r := res.Value.(QueueThumbnailsResult); r != (QueueThumbnailsResult{}) {
		t.Fatalf("a step of documents with thumbnails did %+v", r)
	}
	ids := make([]string, MaxQueueThumbnails+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("66666666-0000-4000-8000-%012d", i)
	}
	var inv *ValidationError
	if _, err := d.Apply(t.Context(), MustCommand(OpQueueThumbnails, "default", "system", t0, QueueThumbnails{DocumentIDs: ids})); !errors.As(err, &inv) {
		t.Fatalf("%d documents at once: %v, want a validation error", len(ids), err)
	}
}
