package storage

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestThumbnails_Lifecycle: the transaction that gives a document
// something to show records a pending thumbnail (a PDF or an image; an
// office file's PDF rendition), others do not; OpSetThumbnail keeps the
// thumbnail, names it on the document, drops the record and deletes the
// one it replaces, in one transaction; one made of content replaced
// meanwhile is not kept; new content of a kind with no thumbnail asks
// again, and OpSetThumbnail without an artifact then deletes the old one;
// a delete drops the record.
func TestThumbnails_Lifecycle(t *testing.T) {
	t.Parallel() // own store, no package or process state
	png := func(s string) NewDocument {
		m, ch, _ := SmallContent([]byte("\x89PNG " + s))
		return NewDocument{Document: Document{DocumentID: "", ContentType: "image/png", ArtifactCategory: ThumbnailCategory}, Content: &m, Chunks: ch}
	}
	pending := func(t *testing.T, d *DB, doc string) *PendingThumbnail {
		t.Helper()
		list, err := d.PendingThumbnails(10)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range list {
			if p.DocumentID == doc {
				return &p
			}
		}
		return nil
	}
	addContent := func(t *testing.T, d *DB, doc, ct, body string) {
		t.Helper()
		m, ch, _ := SmallContent([]byte(body))
		mustApply(t, d, OpUpdateDocument, "default", t0, UpdateDocument{DocumentID: doc, ContentType: &ct, Content: &m, Chunks: ch})
	}
	keep := func(t *testing.T, d *DB, p PendingThumbnail, art string) bool {
		t.Helper()
		var a *NewDocument
		if art != "" {
			x := png(art)
			x.Document.DocumentID = art
			a = &x
		}
		kept, _ := mustApply(t, d, OpSetThumbnail, "default", t0, SetThumbnail{Pending: p, Artifact: a}).Value.(bool)
		return kept
	}
	thumbOf := func(t *testing.T, d *DB, doc string) string {
		t.Helper()
		x, err := d.GetDocument("default", doc)
		if err != nil {
			t.Fatal(err)
		}
		return x.ThumbnailID
	}
	exists := func(d *DB, id string) bool { _, err := d.GetDocument("default", id); return err == nil }

	tests := []struct {
		name string
		run  func(t *testing.T, d *DB, doc string)
	}{
		{"a text file asks for none", func(t *testing.T, d *DB, doc string) {
			addContent(t, d, doc, "text/plain", "hello")
			if p := pending(t, d, doc); p != nil {
				t.Fatalf("pending for a text file: %+v", p)
			}
		}},
		{"a PNG: kept, replaced by new content's, the old one deleted", func(t *testing.T, d *DB, doc string) {
			addContent(t, d, doc, "image/png", "\x89PNG one")
			p := pending(t, d, doc)
			if p == nil {
				t.Fatal("no pending thumbnail for a PNG")
			}
			if !keep(t, d, *p, "aaaaaaaa-0000-4000-8000-000000000001") || thumbOf(t, d, doc) != "aaaaaaaa-0000-4000-8000-000000000001" || pending(t, d, doc) != nil {
				t.Fatalf("first thumbnail not kept: %q, pending %+v", thumbOf(t, d, doc), pending(t, d, doc))
			}
			addContent(t, d, doc, "image/png", "\x89PNG two")
			if thumbOf(t, d, doc) != "aaaaaaaa-0000-4000-8000-000000000001" {
				t.Fatalf("new content dropped the old thumbnail before the new one: %q", thumbOf(t, d, doc))
			}
			p2 := pending(t, d, doc)
			if p2 == nil || p2.ContentSHA256 == p.ContentSHA256 {
				t.Fatalf("pending after new content: %+v", p2)
			}
			// One made of the first content, late: not kept.
			if keep(t, d, *p, "aaaaaaaa-0000-4000-8000-000000000009") || exists(d, "aaaaaaaa-0000-4000-8000-000000000009") || pending(t, d, doc) == nil {
				t.Fatal("a thumbnail of replaced content was kept, or dropped the newer record")
			}
			if !keep(t, d, *p2, "aaaaaaaa-0000-4000-8000-000000000002") || thumbOf(t, d, doc) != "aaaaaaaa-0000-4000-8000-000000000002" {
				t.Fatalf("second thumbnail not kept: %q", thumbOf(t, d, doc))
			}
			if exists(d, "aaaaaaaa-0000-4000-8000-000000000001") {
				t.Fatal("the replaced thumbnail is still there")
			}
			// New content of a kind with none: asked again, none made,
			// the old one deleted.
			addContent(t, d, doc, "text/plain", "now text")
			p3 := pending(t, d, doc)
			if p3 == nil {
				t.Fatal("no pending record for text replacing a picture")
			}
			if keep(t, d, *p3, "") || thumbOf(t, d, doc) != "" || exists(d, "aaaaaaaa-0000-4000-8000-000000000002") || pending(t, d, doc) != nil {
				t.Fatalf("after none could be made: thumbnail %q, pending %+v", thumbOf(t, d, doc), pending(t, d, doc))
			}
		}},
		{"an office file asks with its PDF rendition", func(t *testing.T, d *DB, doc string) {
			addContent(t, d, doc, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "PK docx")
			if p := pending(t, d, doc); p != nil {
				t.Fatalf("pending for a docx without a rendition: %+v", p)
			}
			m, ch, _ := SmallContent([]byte("%PDF-1.7 rendition"))
			mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{
				Document: Document{DocumentID: "bbbbbbbb-0000-4000-8000-000000000001", ContentType: "application/pdf", ArtifactCategory: "RENDITION"}, Content: &m, Chunks: ch}})
			if p := pending(t, d, doc); p == nil || p.Rendition != "bbbbbbbb-0000-4000-8000-000000000001" {
				t.Fatalf("pending after the rendition: %+v", p)
			}
		}},
		{"a delete drops the record", func(t *testing.T, d *DB, doc string) {
			addContent(t, d, doc, "application/pdf", "%PDF-1.7 letter")
			if pending(t, d, doc) == nil {
				t.Fatal("no pending thumbnail for a PDF")
			}
			mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: doc})
			if p := pending(t, d, doc); p != nil {
				t.Fatalf("pending after the delete: %+v", p)
			}
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			doc := fmt.Sprintf("1111111%d-1111-4111-8111-111111111111", i)
			addDoc(t, d, "default", doc, fmt.Sprintf("f/doc%d", i), t0)
			tt.run(t, d, doc)
		})
	}
}

// applyWithRules applies op as a log entry built for the applier rules
// rules (0: a release before Command.Rules) and read back from its wire
// form, as a member replaying the log does.
func applyWithRules(t *testing.T, d *DB, op Op, rules int, payload any) {
	t.Helper()
	c := MustCommand(op, "default", "joe", t0, payload)
	c.Rules = rules
	if _, err := d.Apply(t.Context(), replicate(t, c)); err != nil {
		t.Fatalf("apply %s: %v", op, err)
	}
}

// TestThumbnails_EarlierRulesRecordNone: a log entry built before
// RulesThumbnailsWithContent (a create with a PDF, new PNG content, an
// office file's PDF rendition) records no pending thumbnail, as the
// release that applied it first did not, whichever release replays it;
// the same entries of the current rules record one.
func TestThumbnails_EarlierRulesRecordNone(t *testing.T) {
	t.Parallel() // own store, no package or process state
	const (
		pdf    = "22222222-0000-4000-8000-000000000001"
		pic    = "22222222-0000-4000-8000-000000000002"
		office = "22222222-0000-4000-8000-000000000003"
	)
	for _, tt := range []struct {
		name  string
		rules int
		want  bool
	}{
		{"an entry of a release before Command.Rules", 0, false},
		{"an entry of RulesDefaultsByType", RulesDefaultsByType, false},
		{"an entry of the current rules", Rules, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			applyWithRules(t, d, OpAddDocuments, tt.rules, AddDocuments{Docs: []NewDocument{newDocWith(t, pdf, "application/pdf", []byte("%PDF-1.7 letter"))}})
			addDoc(t, d, "default", pic, "pic", t0)
			png := "image/png"
			m := newDocWith(t, "", png, []byte("\x89PNG picture"))
			applyWithRules(t, d, OpUpdateDocument, tt.rules, UpdateDocument{DocumentID: pic, ContentType: &png, Content: m.Content, Chunks: m.Chunks})
			docx := "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
			o := newDocWith(t, "", docx, []byte("PK docx"))
			addDoc(t, d, "default", office, "office", t0)
			mustApply(t, d, OpUpdateDocument, "default", t0, UpdateDocument{DocumentID: office, ContentType: &docx, Content: o.Content, Chunks: o.Chunks})
			r := newDocWith(t, "22222222-0000-4000-8000-000000000009", "application/pdf", []byte("%PDF-1.7 rendition"))
			r.Document.ArtifactCategory, r.DefaultActions = "RENDITION", false
			applyWithRules(t, d, OpAddArtifact, tt.rules, AddArtifact{DocumentID: office, Artifact: r})
			list, err := d.PendingThumbnails(10)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, p := range list {
				got[p.DocumentID] = true
			}
			for _, doc := range []string{pdf, pic, office} {
				if got[doc] != tt.want {
					t.Errorf("%s: pending thumbnail %v, want %v (all: %+v)", doc, got[doc], tt.want, list)
				}
			}
		})
	}
}

// TestThumbnails_ArchiveByRules: an archive of a document built with
// RulesThumbnailsWithContent or later leaves its thumbnail out (the
// pipeline made it, no client asked for it) and keeps its other
// artifacts; an entry of earlier rules holds every artifact, as the
// release that applied it first made it.
func TestThumbnails_ArchiveByRules(t *testing.T) {
	t.Parallel() // own store, no package or process state
	const doc = "33333333-0000-4000-8000-000000000001"
	for _, tt := range []struct {
		name  string
		rules int
		want  []string
	}{
		{"an entry of RulesDefaultsByType", RulesDefaultsByType, []string{"letter.pdf", "letter.pdf.artifacts/" + doc[:30] + "02", "letter.pdf.artifacts/" + doc[:30] + "03"}},
		{"an entry of the current rules", Rules, []string{"letter.pdf", "letter.pdf.artifacts/" + doc[:30] + "03"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			nd := newDocWith(t, doc, "application/pdf", []byte("%PDF-1.7 letter"))
			nd.Document.Path = "letter.pdf"
			mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{nd}})
			for id, category := range map[string]string{doc[:30] + "02": ThumbnailCategory, doc[:30] + "03": "RENDITION"} {
				a := newDocWith(t, id, "application/pdf", []byte("%PDF-1.7 "+category))
				a.Document.Path, a.DefaultActions, a.Document.ArtifactCategory = "", false, category
				mustApply(t, d, OpAddArtifact, "default", t0, AddArtifact{DocumentID: doc, Artifact: a})
			}
			applyWithRules(t, d, OpAddArchive, tt.rules, AddArchive{ID: "a1", Items: []ArchiveItem{{DocumentID: doc}}, Expires: t0.Add(time.Hour)})
			a, err := d.GetArchive("default", "a1", t0)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range a.Entries {
				got = append(got, e.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("entries %v, want %v", got, tt.want)
			}
		})
	}
}
