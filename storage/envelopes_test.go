package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestEnvelope_ExpiryAndTerminal: a signing link used after the envelope
// expired is refused; a decline ends the envelope, after which nothing
// moves it (a late void or a completion).
func TestEnvelope_ExpiryAndTerminal(t *testing.T) {
	d := mustOpen(t)
	mustApply(t, d, OpAddDocuments, "s", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "doc", Path: "a.pdf", ContentType: "application/pdf"}}}})
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
