package storage

import (
	"testing"
	"time"
)

// TestExpiry_ExamineAndArchive: examine objects and archives hold their
// content until they expire; the sweep's command removes only expired
// ones and releases the content.
func TestExpiry_ExamineAndArchive(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	raw := []byte("%PDF-1.4 examine me")
	m, tail, ok := SmallContent(raw)
	if !ok {
		t.Fatal("not small")
	}
	mustApply(t, d, OpPutExamine, "s", t0, PutExamine{ID: "e1", Content: m, Chunks: tail})
	mustApply(t, d, OpAddDocuments, "s", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "d1", Path: "a.txt"}, Content: &m}}})
	mustApply(t, d, OpAddArchive, "s", t0, AddArchive{ID: "a1", Items: []ArchiveItem{{DocumentID: "d1"}}, Expires: t0.Add(time.Hour)})

	for _, tt := range []struct {
		name string
		list func(time.Time, int) ([]DocRef, error)
		at   time.Time
		want int
	}{
		{"examine before", d.ExpiredExamines, t0.Add(time.Hour), 0},
		{"examine after", d.ExpiredExamines, t0.Add(ExamineTTL), 1},
		{"archive before", d.ExpiredArchives, t0.Add(time.Minute), 0},
		{"archive after", d.ExpiredArchives, t0.Add(time.Hour), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refs, err := tt.list(tt.at, 10)
			if err != nil || len(refs) != tt.want || tt.want == 1 && refs[0].Site != "s" {
				t.Fatalf("%v %v", refs, err)
			}
		})
	}
	// The sweep's command refuses to remove what has not expired.
	res := mustApply(t, d, OpDeleteExamine, "s", t0.Add(time.Hour), DeleteExamine{ID: "e1", Expired: true})
	if removed, _ := res.Value.(bool); removed {
		t.Fatal("an examine object was removed before it expired")
	}
	mustApply(t, d, OpDeleteDocument, "s", t0, DocumentRef{DocumentID: "d1"})
	// The archive still holds the document's content.
	rd, err := d.OpenManifest(m.SHA256)
	if err != nil {
		t.Fatalf("content of a deleted document held by an archive: %v", err)
	}
	rd.Close()
	mustApply(t, d, OpDeleteExamine, "s", t0.Add(ExamineTTL), DeleteExamine{ID: "e1", Expired: true})
	mustApply(t, d, OpDeleteArchive, "s", t0.Add(time.Hour), DeleteArchive{ID: "a1", Expired: true})
	var n uint64
	err = d.view(func(t *tx) error {
		var err error
		n, err = chunkRefs(t, m.Chunks[0].SHA)
		return err
	})
	if err != nil || n != 0 {
		t.Fatalf("chunk references left after both expired: %d %v", n, err)
	}
	if _, err := d.GetExamine("s", "e1", t0); err == nil {
		t.Error("the examine object is still there")
	}
}
