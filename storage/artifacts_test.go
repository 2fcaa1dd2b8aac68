package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func artifactID(i int) string { return fmt.Sprintf("a%07d-0000-4000-8000-000000000000", i) }

func addArtifactCmd(site, doc, art string) *Command {
	return MustCommand(OpAddArtifact, site, "joe", t0, AddArtifact{
		DocumentID: doc,
		Artifact:   NewDocument{Document: Document{DocumentID: art, Path: art, ArtifactCategory: "OCR"}, Tags: []Tag{{Key: "k", Value: "v"}}},
	})
}

func addArtifact(d *DB, site, doc, art string) error {
	_, err := d.Apply(context.Background(), addArtifactCmd(site, doc, art))
	return err
}

// TestArtifacts_LimitAndCascade: the MaxArtifacts-th artifact is the last
// one a document takes (refused before anything is written), and a hard
// delete of the document removes every artifact, its tags and its index
// entry in the same transaction, and gives back their document count.
func TestArtifacts_LimitAndCascade(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const doc = "11111111-1111-4111-8111-111111111111"
	addDoc(t, d, "default", doc, "a.txt", t0)
	mustApply(t, d, OpSetSiteConfig, "default", t0, SiteConfig{MaxDocuments: "5000"})
	// Concurrent, in groups: the limit is counted in the applier, inside
	// each command's turn of the group's transaction. Each command has a
	// time of its own, as commands from a clock do: at one shared time
	// the parent's activity entries took 1,000 numbers under one time,
	// each found by probing every one before it (putActivity).
	applyConcurrently(t, d, MaxArtifacts, func(i int) *Command {
		c := addArtifactCmd("default", doc, artifactID(i))
		c.At = t0.Add(time.Duration(i) * time.Millisecond)
		return c
	})
	var ve *ValidationError
	if err := addArtifact(d, "default", doc, artifactID(MaxArtifacts)); !errors.As(err, &ve) {
		t.Fatalf("artifact over the limit: err = %v, want a validation error", err)
	}
	if _, err := d.GetDocumentAny("default", artifactID(MaxArtifacts)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused artifact was written: %v", err)
	}
	p, err := d.GetDocument("default", doc)
	if err != nil || p.ArtifactCount != MaxArtifacts {
		t.Fatalf("parent = %+v, %v; want %d artifacts", p, err, MaxArtifacts)
	}
	page, err := d.ListArtifacts("default", doc, "", "", 10)
	if err != nil || len(page.Artifacts) != 10 || page.Next == "" {
		t.Fatalf("first page = %d artifacts, next %q, %v", len(page.Artifacts), page.Next, err)
	}
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: doc})
	for _, i := range []int{0, 500, MaxArtifacts - 1} {
		if _, err := d.GetDocumentAny("default", artifactID(i)); !errors.Is(err, ErrNotFound) {
			t.Fatalf("artifact %d survived its document: %v", i, err)
		}
	}
	err = d.view(func(t2 *tx) error {
		for _, pfx := range [][]byte{artifactPrefix("default", doc), tagPrefix("default", artifactID(7)), []byte(pfxTagIndex)} {
			if k := t2.firstKey(pfx); k != nil {
				return fmt.Errorf("key %q left", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n string
	if err := d.view(func(t2 *tx) error {
		b, err := t2.getRaw(docCountKey("default"))
		n = string(b)
		return err
	}); err != nil || n != "0" {
		t.Fatalf("document count after the delete = %q, %v; want 0", n, err)
	}
}

// TestArtifacts_DirectOpsRefuseArtifacts: the document commands do not
// act on an artifact's record by its id (OpDeleteArtifact does), and a
// deleted artifact's promotion is cleared with it.
func TestArtifacts_DirectOpsRefuseArtifacts(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const doc = "11111111-1111-4111-8111-111111111111"
	addDoc(t, d, "default", doc, "a.txt", t0)
	art := artifactID(1)
	if err := addArtifact(d, "default", doc, art); err != nil {
		t.Fatal(err)
	}
	for _, op := range []Op{OpSoftDelete, OpDeleteDocument, OpRestore} {
		if _, err := d.Apply(context.Background(), MustCommand(op, "default", "joe", t0, DocumentRef{DocumentID: art})); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s on an artifact: err = %v, want not found", op, err)
		}
	}
	if err := addArtifact(d, "default", art, artifactID(2)); !errors.Is(err, ErrNotFound) {
		t.Errorf("artifact of an artifact: err = %v, want not found", err)
	}
	// A soft-deleted document's artifacts take no writes until it is
	// restored (also a write resolved just before the soft delete).
	mustApply(t, d, OpSoftDelete, "default", t0, DocumentRef{DocumentID: doc})
	if _, err := d.Apply(context.Background(), MustCommand(OpSetTags, "default", "joe", t0, SetTags{DocumentID: art, Mode: TagsAdd, Tags: []Tag{{Key: "x"}}})); !errors.Is(err, ErrNotFound) {
		t.Errorf("tag on an artifact of a soft-deleted document: err = %v, want not found", err)
	}
	mustApply(t, d, OpRestore, "default", t0, DocumentRef{DocumentID: doc})
	mustApply(t, d, OpSetTags, "default", t0, SetTags{DocumentID: art, Mode: TagsAdd, Tags: []Tag{{Key: "x"}}})
	mustApply(t, d, OpPromoteArtifact, "default", t0, ArtifactRef{DocumentID: doc, ArtifactID: art})
	if p, _ := d.GetDocument("default", doc); p == nil || p.PromotedArtifactID != art {
		t.Fatalf("promotion not recorded: %+v", p)
	}
	mustApply(t, d, OpDeleteArtifact, "default", t0, ArtifactRef{DocumentID: doc, ArtifactID: art})
	p, err := d.GetDocument("default", doc)
	if err != nil || p.PromotedArtifactID != "" || p.ArtifactCount != 0 {
		t.Fatalf("parent after deleting its promoted artifact = %+v, %v", p, err)
	}
}

// TestArtifacts_DeleteTooBig: the premise of the server's fallback
// (deleteDocument): artifacts can hold more than one transaction can
// delete, and Apply says so with IsTooBig, writing nothing.
func TestArtifacts_DeleteTooBig(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const doc = "11111111-1111-4111-8111-111111111111"
	addDoc(t, d, "default", doc, "a.txt", t0)
	value := string(bytes.Repeat([]byte("v"), MaxValueBytes))
	var tags []Tag
	for j := range MaxTagsPerRequest {
		tags = append(tags, Tag{Key: fmt.Sprintf("t%03d", j), Value: value})
	}
	applyConcurrently(t, d, 20, func(i int) *Command {
		return MustCommand(OpAddArtifact, "default", "joe", t0, AddArtifact{DocumentID: doc, Artifact: NewDocument{Document: Document{DocumentID: artifactID(i)}, Tags: tags}})
	})
	_, err := d.Apply(context.Background(), MustCommand(OpDeleteDocument, "default", "joe", t0, DocumentRef{DocumentID: doc}))
	if !IsTooBig(err) {
		t.Fatalf("delete of 20 artifacts with 100 KB of tags each: err = %v, want IsTooBig", err)
	}
	if _, err := d.GetArtifact("default", doc, artifactID(3)); err != nil {
		t.Fatalf("the refused delete removed an artifact: %v", err)
	}
	ids, err := d.ArtifactIDs("default", doc, 100)
	if err != nil || len(ids) != 20 {
		t.Fatalf("ArtifactIDs = %v, %v", ids, err)
	}
}
