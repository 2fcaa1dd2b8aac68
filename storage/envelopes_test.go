package storage

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// contentDoc adds a PDF document id at <id>.pdf holding data.
func contentDoc(t *testing.T, d *DB, site, id, data string) *Manifest {
	t.Helper()
	m, tail, err := WriteContent(context.Background(), d, bytes.NewReader([]byte(data)), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, d, OpAddDocuments, site, t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: id + ".pdf", ContentType: "application/pdf"}, Content: &m, Chunks: tail}}})
	return &m
}

// setContent replaces a document's content with data.
func setContent(t *testing.T, d *DB, site, id, data string) {
	t.Helper()
	m, tail, err := WriteContent(context.Background(), d, bytes.NewReader([]byte(data)), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, d, OpUpdateDocument, site, t0, UpdateDocument{DocumentID: id, Content: &m, Chunks: tail})
}

// TestEnvelope_BoundToSentContent: an envelope records the content it
// is sent with; a signature or a completion after the document's content
// changed voids it instead, and a completion must be made of the recorded
// bytes (issue 29, finding 3).
func TestEnvelope_BoundToSentContent(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	put := func(env, doc string) *Envelope {
		e := Envelope{EnvelopeID: env, DocumentID: doc, Provider: "local", ExpiresAt: t0.AddDate(0, 0, 1),
			Signers: []EnvelopeSigner{{RecipientID: "1", Name: "Ann", Email: "a@example.com", RoutingOrder: 1}}}
		res := mustApply(t, d, OpPutEnvelope, "s", t0, PutEnvelope{Envelope: e, Tokens: SignerTokens{"1": "h-" + env}})
		return res.Value.(*Envelope)
	}
	change := func(ch EnvelopeChange) (*Envelope, error) {
		res, err := d.Apply(context.Background(), MustCommand(OpEnvelopeChange, "s", "x", t0, ch))
		if err != nil {
			return nil, err
		}
		return res.Value.(*Envelope), nil
	}
	sign := func(env string) (*Envelope, error) {
		return change(EnvelopeChange{EnvelopeID: env, Action: EnvelopeActionSign, RecipientID: "1", TokenHash: "h-" + env, TypedName: "Ann"})
	}
	art := func() *NewDocument {
		return &NewDocument{Document: Document{DocumentID: "signed-" + t.Name(), Path: "x-signed.pdf", ContentType: "application/pdf", ArtifactCategory: "SIGNED"}}
	}

	// Sent, then the content changes: the signature voids the envelope.
	m1 := contentDoc(t, d, "s", "d1", "%PDF-1.4 seen")
	if e := put("e1", "d1"); e.ContentSHA256 != m1.SHA256 || e.ContentLength != m1.Size {
		t.Fatalf("recorded content %q/%d, want %q/%d", e.ContentSHA256, e.ContentLength, m1.SHA256, m1.Size)
	}
	setContent(t, d, "s", "d1", "%PDF-1.4 changed")
	if e, err := sign("e1"); err != nil || e.Status != EnvelopeVoided || e.VoidedReason != EnvelopeContentChanged {
		t.Fatalf("signing changed content: %v %v", e, err)
	}

	// Signed, then the content changes before completion: voided, no artifact.
	m2 := contentDoc(t, d, "s", "d2", "%PDF-1.4 two")
	put("e2", "d2")
	if e, err := sign("e2"); err != nil || e.Status != EnvelopeSigned {
		t.Fatalf("sign: %v %v", e, err)
	}
	var ce *ConflictError
	if _, err := change(EnvelopeChange{EnvelopeID: "e2", Action: EnvelopeActionComplete, Artifact: art(), SourceSHA256: "other"}); !errors.As(err, &ce) {
		t.Fatalf("a signed copy of other bytes: %v, want a conflict", err)
	}
	setContent(t, d, "s", "d2", "%PDF-1.4 two, changed")
	if e, err := change(EnvelopeChange{EnvelopeID: "e2", Action: EnvelopeActionComplete, Artifact: art(), SourceSHA256: m2.SHA256}); err != nil || e.Status != EnvelopeVoided {
		t.Fatalf("completion after a change: %v %v", e, err)
	}
	if _, err := d.GetDocumentAny("s", "signed-"+t.Name()); err == nil {
		t.Fatal("a signed artifact was stored for changed content")
	}

	// Unchanged: completes.
	m3 := contentDoc(t, d, "s", "d3", "%PDF-1.4 three")
	put("e3", "d3")
	if _, err := sign("e3"); err != nil {
		t.Fatal(err)
	}
	if e, err := change(EnvelopeChange{EnvelopeID: "e3", Action: EnvelopeActionComplete, Artifact: art(), SourceSHA256: m3.SHA256}); err != nil || e.Status != EnvelopeCompleted {
		t.Fatalf("completion: %v %v", e, err)
	}
}

// TestEnvelope_ExpiryAndTerminal: a signing link used after the envelope
// expired is refused; a decline ends the envelope, after which nothing
// moves it (a late void or a completion).
func TestEnvelope_ExpiryAndTerminal(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	contentDoc(t, d, "s", "doc", "%PDF-1.4 a")
	env := Envelope{EnvelopeID: "e1", DocumentID: "doc", Provider: "local", ExpiresAt: t0.AddDate(0, 0, 1),
		Signers: []EnvelopeSigner{{RecipientID: "1", Name: "Ann", Email: "a@example.com", RoutingOrder: 1}}}
	mustApply(t, d, OpPutEnvelope, "s", t0, PutEnvelope{Envelope: env, Tokens: SignerTokens{"1": "h1"}})
	sign := func(at int, action string) error {
		_, err := d.Apply(context.Background(), MustCommand(OpEnvelopeChange, "s", "ann", t0.AddDate(0, 0, at),
			EnvelopeChange{EnvelopeID: "e1", Action: action, RecipientID: "1", TokenHash: "h1", TypedName: "Ann", Reason: "r"}))
		return err
	}
	var ce *ConflictError
	if err := sign(2, EnvelopeActionSign); !errors.As(err, &ce) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("signing after the expiry: %v", err)
	}
	if err := sign(0, EnvelopeActionDecline); err != nil {
		t.Fatalf("decline: %v", err)
	}
	for _, ch := range []EnvelopeChange{
		{EnvelopeID: "e1", Action: EnvelopeActionVoid, Reason: "late"},
		{EnvelopeID: "e1", Action: EnvelopeActionComplete, Artifact: &NewDocument{Document: Document{DocumentID: "signed"}}},
		{EnvelopeID: "e1", Action: EnvelopeActionSign, RecipientID: "1", TokenHash: "h1", TypedName: "Ann"},
	} {
		_, err := d.Apply(context.Background(), MustCommand(OpEnvelopeChange, "s", "x", t0, ch))
		if !errors.As(err, &ce) {
			t.Errorf("%s on a declined envelope: %v, want a conflict", ch.Action, err)
		}
	}
	e, err := d.GetEnvelope("s", "e1")
	if err != nil || e.Status != EnvelopeDeclined || e.SignedArtifactID != "" {
		t.Fatalf("envelope %+v, %v", e, err)
	}
	if _, _, err := d.EnvelopeByToken("h1"); err == nil {
		t.Error("the declining signer's link still works")
	}
}
