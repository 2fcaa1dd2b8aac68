package storage

// E-signature envelopes (SERVICE-SPEC.md §4.5, §6; API.md "E-signature"):
// a document (or artifact) sent to signers in routing order. Every
// transition is decided here, in the transaction: terminal statuses
// (completed, declined, voided) never change again, a signer acts once,
// and an envelope becomes completed only in the transaction that stores
// its signed PDF as an artifact.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Envelope statuses (DocuSign's words) and signer statuses.
const (
	EnvelopeCreated   = "created"   // a draft: nothing sent
	EnvelopeSent      = "sent"      // waiting for signers
	EnvelopeSigned    = "signed"    // every signer signed; the signed PDF is being made
	EnvelopeCompleted = "completed" // the signed PDF is stored
	EnvelopeDeclined  = "declined"
	EnvelopeVoided    = "voided"

	SignerCreated   = "created"
	SignerSent      = "sent"
	SignerCompleted = "completed"
	SignerDeclined  = "declined"
)

// Envelope limits.
const (
	MaxEnvelopeSigners   = 20
	MaxSignatureDrawing  = 256 << 10 // a drawn signature (PNG)
	MaxSignerTokens      = 5         // live signing links per signer
	MaxEnvelopesPerDoc   = 100
	MaxEnvelopeTextBytes = 1024
)

// EnvelopeTerminal reports whether an envelope status never changes again.
func EnvelopeTerminal(s string) bool {
	return s == EnvelopeCompleted || s == EnvelopeDeclined || s == EnvelopeVoided
}

// EnvelopeSigner is one recipient who signs.
type EnvelopeSigner struct {
	RecipientID   string     `json:"recipientId"`
	Name          string     `json:"name"`
	Email         string     `json:"email,omitempty"`
	ClientUserID  string     `json:"clientUserId,omitempty"` // embedded signing: no mail
	RoutingOrder  int        `json:"routingOrder"`
	Status        string     `json:"status"`
	TokenHashes   []string   `json:"tokenHashes,omitempty"` // SHA-256 of live signing tokens
	SentDate      *time.Time `json:"sentDate,omitempty"`
	SignedDate    *time.Time `json:"signedDate,omitempty"`
	TypedName     string     `json:"typedName,omitempty"`
	Drawing       []byte     `json:"drawing,omitempty"` // PNG
	DeclineReason string     `json:"declineReason,omitempty"`
	// Delivery is what the last mail of the signer's link did (issue 47):
	// "sent" or "failed"; empty for a signer never mailed (embedded, or
	// not their turn yet). A signer whose mail failed may be given a
	// recipient view by the sender (views/recipient).
	Delivery string `json:"delivery,omitempty"`
}

// Envelope is an envelope of the local provider.
type Envelope struct {
	EnvelopeID       string           `json:"envelopeId"`
	DocumentID       string           `json:"documentId"`
	ArtifactID       string           `json:"artifactId,omitempty"`
	Provider         string           `json:"provider"`
	Status           string           `json:"status"`
	EmailSubject     string           `json:"emailSubject,omitempty"`
	Environment      string           `json:"environment,omitempty"`
	EmbeddedStartURL string           `json:"embeddedRecipientStartUrl,omitempty"`
	Signers          []EnvelopeSigner `json:"signers"`
	VoidedReason     string           `json:"voidedReason,omitempty"`
	SignedArtifactID string           `json:"signedArtifactId,omitempty"`
	ExpiresAt        time.Time        `json:"expiresAt"`
	UserID           string           `json:"userId,omitempty"`
	InsertedDate     time.Time        `json:"insertedDate"`
	LastModifiedDate time.Time        `json:"lastModifiedDate"`
	CompletedDate    *time.Time       `json:"completedDate,omitempty"`
	// The exact content the envelope was sent with (issue 29): recorded
	// when it is sent, in that transaction. Signers are shown these bytes,
	// completion signs these bytes, and a document whose content is no
	// longer these bytes voids the envelope when a signer acts or it
	// completes.
	ContentSHA256     string `json:"contentSha256,omitempty"`
	ContentLength     int64  `json:"contentLength,omitempty"`
	ContentVersionKey string `json:"contentVersionKey,omitempty"`
}

// EnvelopeContentChanged is the reason an envelope is voided when its
// document's content is not what it was sent with.
const EnvelopeContentChanged = "the document's content changed after the envelope was sent"

// envelopeRecord is the document (or artifact) an envelope signs.
func envelopeRecord(t *tx, site string, e *Envelope) (*Document, error) {
	if e.ArtifactID == "" {
		return getLiveDoc(t, site, e.DocumentID)
	}
	_, a, err := getArtifact(t, site, e.DocumentID, e.ArtifactID)
	return a, err
}

// bindContent records the content e is sent with.
func bindContent(t *tx, site string, e *Envelope) error {
	d, err := envelopeRecord(t, site, e)
	if err != nil {
		return err
	}
	if !d.HasContent || d.ContentSHA256 == "" {
		return Invalid("documentId", "the document has no content to sign")
	}
	e.ContentSHA256, e.ContentLength, e.ContentVersionKey = d.ContentSHA256, d.ContentLength, d.VersionKey
	return nil
}

// contentChanged reports whether e's document no longer holds the
// content e was sent with (or is gone). An envelope sent before the
// content was recorded has nothing to sign that anyone can vouch for: it
// counts as changed.
func contentChanged(t *tx, site string, e *Envelope) (bool, error) {
	if e.ContentSHA256 == "" {
		return true, nil
	}
	d, err := envelopeRecord(t, site, e)
	if errors.Is(err, ErrNotFound) {
		return true, nil
	}
	var nf *NotFoundError
	if errors.As(err, &nf) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !d.HasContent || d.ContentSHA256 != e.ContentSHA256, nil
}

// voidEnvelope ends e with reason; every link stops working.
func voidEnvelope(t *tx, e *Envelope, reason string) error {
	e.Status, e.VoidedReason = EnvelopeVoided, reason
	for i := range e.Signers {
		for _, h := range e.Signers[i].TokenHashes {
			if err := t.del(envelopeTokenKey(h)); err != nil {
				return err
			}
		}
		e.Signers[i].TokenHashes = nil
	}
	return nil
}

func envelopeKey(site, id string) []byte { return []byte(pfxEnvelope + sk(site) + "/" + id) }

func envelopeDocKey(site, doc, id string) []byte {
	return []byte(pfxEnvelopeDoc + sk(site) + "/" + doc + "/" + id)
}

func envelopeDocPrefix(site, doc string) []byte {
	return []byte(pfxEnvelopeDoc + sk(site) + "/" + doc + "/")
}

func envelopeTokenKey(hash string) []byte { return []byte(pfxEnvelopeToken + hash) }

// EnvelopeTokenRef is what a signing token's hash points at.
type EnvelopeTokenRef struct {
	Site        string `json:"site"`
	EnvelopeID  string `json:"envelopeId"`
	RecipientID string `json:"recipientId"`
}

func envelopeNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Envelope '%s' not found", id)}
}

func getEnvelope(t *tx, site, id string) (*Envelope, error) {
	var e Envelope
	if err := t.getJSON(envelopeKey(site, id), &e); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, envelopeNotFound(id)
		}
		return nil, err
	}
	return &e, nil
}

func putEnvelope(t *tx, site string, e *Envelope) error {
	return t.setJSON(envelopeKey(site, e.EnvelopeID), e)
}

// SignerTokens gives new signing tokens (by their hashes) to signers.
type SignerTokens map[string]string // recipientId -> token hash

// PutEnvelope is the payload of OpPutEnvelope: a new envelope, sent at
// once when Tokens name the first signers.
type PutEnvelope struct {
	Envelope Envelope     `json:"envelope"`
	Tokens   SignerTokens `json:"tokens,omitempty"`
}

// nextSigners are the recipients of the lowest routing order not yet
// completed, when none of them declined.
func (e *Envelope) nextSigners() []string {
	order := -1
	for _, s := range e.Signers {
		if s.Status != SignerCompleted && (order < 0 || s.RoutingOrder < order) {
			order = s.RoutingOrder
		}
	}
	var out []string
	for _, s := range e.Signers {
		if s.RoutingOrder == order && s.Status != SignerCompleted {
			out = append(out, s.RecipientID)
		}
	}
	return out
}

// NextSigners is nextSigners for the server, which makes their tokens.
func (e *Envelope) NextSigners() []string { return e.nextSigners() }

// sendTo marks the listed signers sent with their tokens.
func (e *Envelope) sendTo(tokens SignerTokens, at time.Time, t *tx, site string) error {
	for i := range e.Signers {
		s := &e.Signers[i]
		h, ok := tokens[s.RecipientID]
		if !ok {
			continue
		}
		if s.Status == SignerCompleted || s.Status == SignerDeclined {
			return &ConflictError{Msg: fmt.Sprintf("recipient '%s' has %s", s.RecipientID, s.Status)}
		}
		s.Status, s.SentDate = SignerSent, &at
		s.TokenHashes = append(s.TokenHashes, h)
		if len(s.TokenHashes) > MaxSignerTokens {
			if err := t.del(envelopeTokenKey(s.TokenHashes[0])); err != nil {
				return err
			}
			s.TokenHashes = s.TokenHashes[1:]
		}
		if err := t.setJSON(envelopeTokenKey(h), EnvelopeTokenRef{Site: site, EnvelopeID: e.EnvelopeID, RecipientID: s.RecipientID}); err != nil {
			return err
		}
	}
	return nil
}

func applyPutEnvelope(t *tx, c *Command) (any, error) {
	p, err := decode[PutEnvelope](c)
	if err != nil {
		return nil, err
	}
	e := p.Envelope
	if len(e.Signers) == 0 || len(e.Signers) > MaxEnvelopeSigners {
		return nil, Invalid("signers", fmt.Sprintf("1 to %d signers", MaxEnvelopeSigners))
	}
	if e.ArtifactID == "" {
		_, err = getLiveDoc(t, c.Site, e.DocumentID)
	} else {
		_, _, err = getArtifact(t, c.Site, e.DocumentID, e.ArtifactID)
	}
	if err != nil {
		return nil, err
	}
	if n := t.count(envelopeDocPrefix(c.Site, e.DocumentID)); n >= MaxEnvelopesPerDoc {
		return nil, Invalid("envelopes", fmt.Sprintf("at most %d envelopes per document", MaxEnvelopesPerDoc))
	}
	e.Status, e.UserID, e.InsertedDate, e.LastModifiedDate = EnvelopeCreated, c.User, c.At, c.At
	for i := range e.Signers {
		e.Signers[i].Status, e.Signers[i].TokenHashes = SignerCreated, nil
	}
	e.ContentSHA256, e.ContentLength, e.ContentVersionKey = "", 0, ""
	if len(p.Tokens) > 0 {
		e.Status = EnvelopeSent
		if err := bindContent(t, c.Site, &e); err != nil {
			return nil, err
		}
		if err := e.sendTo(p.Tokens, c.At, t, c.Site); err != nil {
			return nil, err
		}
	}
	if err := t.set(envelopeDocKey(c.Site, e.DocumentID, e.EnvelopeID), nil); err != nil {
		return nil, err
	}
	return &e, putEnvelope(t, c.Site, &e)
}

// EnvelopeChange is the payload of OpEnvelopeChange: one transition.
type EnvelopeChange struct {
	EnvelopeID string `json:"envelopeId"`
	// Action: send (a draft, with Tokens), tokens (new links for signers
	// already sent), sign, decline, void, complete (with Artifact).
	Action      string       `json:"action"`
	RecipientID string       `json:"recipientId,omitempty"`
	TokenHash   string       `json:"tokenHash,omitempty"` // sign, decline: the link used
	Tokens      SignerTokens `json:"tokens,omitempty"`    // send, tokens, sign (the next signers)
	TypedName   string       `json:"typedName,omitempty"`
	Drawing     []byte       `json:"drawing,omitempty"`
	Reason      string       `json:"reason,omitempty"`
	Artifact    *NewDocument `json:"artifact,omitempty"`
	// SourceSHA256 (complete): the content the signed copy was made of.
	SourceSHA256 string `json:"sourceSha256,omitempty"`
	// Delivery (delivery): what mailing each recipient's link did, "sent"
	// or "failed" (issue 47).
	Delivery map[string]string `json:"delivery,omitempty"`
}

// Envelope actions.
const (
	EnvelopeActionSend     = "send"
	EnvelopeActionTokens   = "tokens"
	EnvelopeActionSign     = "sign"
	EnvelopeActionDecline  = "decline"
	EnvelopeActionVoid     = "void"
	EnvelopeActionComplete = "complete"
	// EnvelopeActionDelivery records whether the mails of signers' links
	// went out (after they were sent: the mail follows the write).
	EnvelopeActionDelivery = "delivery"
)

// Signer deliveries (EnvelopeSigner.Delivery).
const (
	DeliverySent   = "sent"
	DeliveryFailed = "failed"
)

func (e *Envelope) signer(id string) *EnvelopeSigner {
	for i := range e.Signers {
		if e.Signers[i].RecipientID == id {
			return &e.Signers[i]
		}
	}
	return nil
}

func applyEnvelopeChange(t *tx, c *Command) (any, error) {
	p, err := decode[EnvelopeChange](c)
	if err != nil {
		return nil, err
	}
	e, err := getEnvelope(t, c.Site, p.EnvelopeID)
	if err != nil {
		return nil, err
	}
	if EnvelopeTerminal(e.Status) {
		return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s", e.EnvelopeID, e.Status)}
	}
	switch p.Action {
	case EnvelopeActionSend:
		if e.Status != EnvelopeCreated {
			return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s", e.EnvelopeID, e.Status)}
		}
		e.Status = EnvelopeSent
		if err := bindContent(t, c.Site, e); err != nil {
			return nil, err
		}
		if err := e.sendTo(p.Tokens, c.At, t, c.Site); err != nil {
			return nil, err
		}
	case EnvelopeActionTokens:
		if e.Status != EnvelopeSent {
			return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s", e.EnvelopeID, e.Status)}
		}
		for id := range p.Tokens {
			if s := e.signer(id); s == nil || s.Status != SignerSent {
				return nil, &ConflictError{Msg: fmt.Sprintf("recipient '%s' is not waiting to sign", id)}
			}
		}
		if err := e.sendTo(p.Tokens, c.At, t, c.Site); err != nil {
			return nil, err
		}
	case EnvelopeActionSign, EnvelopeActionDecline:
		s := e.signer(p.RecipientID)
		if s == nil || !slices.Contains(s.TokenHashes, p.TokenHash) {
			return nil, envelopeNotFound(e.EnvelopeID)
		}
		if e.Status != EnvelopeSent || s.Status != SignerSent {
			return nil, &ConflictError{Msg: fmt.Sprintf("recipient '%s' has %s", s.RecipientID, s.Status)}
		}
		if !c.At.Before(e.ExpiresAt) {
			return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s' expired", e.EnvelopeID)}
		}
		for _, h := range s.TokenHashes {
			if err := t.del(envelopeTokenKey(h)); err != nil {
				return nil, err
			}
		}
		s.TokenHashes = nil
		if p.Action == EnvelopeActionDecline {
			s.Status, s.DeclineReason = SignerDeclined, p.Reason
			e.Status = EnvelopeDeclined
			break
		}
		if p.TypedName == "" && len(p.Drawing) == 0 {
			return nil, Invalid("signature", "type your name or draw a signature")
		}
		// A signature covers only the bytes the envelope was sent with.
		if changed, err := contentChanged(t, c.Site, e); err != nil {
			return nil, err
		} else if changed {
			if err := voidEnvelope(t, e, EnvelopeContentChanged); err != nil {
				return nil, err
			}
			break
		}
		if len(p.Drawing) > MaxSignatureDrawing {
			return nil, Invalid("signature", "the drawn signature is too large")
		}
		at := c.At
		s.Status, s.SignedDate, s.TypedName, s.Drawing = SignerCompleted, &at, p.TypedName, p.Drawing
		next := e.nextSigners()
		if len(next) == 0 {
			e.Status = EnvelopeSigned
			break
		}
		if err := e.sendTo(p.Tokens, c.At, t, c.Site); err != nil {
			return nil, err
		}
	case EnvelopeActionDelivery:
		// Only signers waiting to sign are marked; a signer who acted in
		// between keeps their state (the outcome no longer matters).
		for id, d := range p.Delivery {
			if d != DeliverySent && d != DeliveryFailed {
				return nil, Invalid("delivery", "a delivery is sent or failed")
			}
			if s := e.signer(id); s != nil && s.Status == SignerSent {
				s.Delivery = d
			}
		}
	case EnvelopeActionVoid:
		if p.Reason == "" {
			return nil, Invalid("voidedReason", "'voidedReason' is required")
		}
		e.Status, e.VoidedReason = EnvelopeVoided, p.Reason
		for _, s := range e.Signers {
			for _, h := range s.TokenHashes {
				if err := t.del(envelopeTokenKey(h)); err != nil {
					return nil, err
				}
			}
		}
	case EnvelopeActionComplete:
		if e.Status != EnvelopeSigned {
			return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s", e.EnvelopeID, e.Status)}
		}
		// The signed PDF is made of the bytes the envelope was sent with
		// (SourceSHA256), and those are still the document's.
		changed, err := contentChanged(t, c.Site, e)
		if err != nil {
			return nil, err
		}
		if changed {
			if err := voidEnvelope(t, e, EnvelopeContentChanged); err != nil {
				return nil, err
			}
			break
		}
		if p.Artifact == nil || p.SourceSHA256 != e.ContentSHA256 {
			return nil, &ConflictError{Msg: fmt.Sprintf("Envelope '%s': the signed copy is not made of the content it was sent with", e.EnvelopeID)}
		}
		sub := MustCommand(OpAddArtifact, c.Site, c.User, c.At, AddArtifact{DocumentID: e.DocumentID, Artifact: *p.Artifact})
		if _, err := applyAddArtifact(t, sub); err != nil {
			return nil, err
		}
		at := c.At
		e.Status, e.SignedArtifactID, e.CompletedDate = EnvelopeCompleted, p.Artifact.Document.DocumentID, &at
	default:
		return nil, Invalid("action", "unknown envelope action")
	}
	e.LastModifiedDate = c.At
	return e, putEnvelope(t, c.Site, e)
}

// GetEnvelope reads an envelope of a site.
func (d *DB) GetEnvelope(site, id string) (*Envelope, error) {
	var e *Envelope
	err := d.view(func(t *tx) error {
		var err error
		e, err = getEnvelope(t, site, id)
		return err
	})
	return e, err
}

// EnvelopeByToken finds the envelope and signer a signing token's hash
// belongs to.
func (d *DB) EnvelopeByToken(hash string) (*EnvelopeTokenRef, *Envelope, error) {
	var ref EnvelopeTokenRef
	var e *Envelope
	err := d.view(func(t *tx) error {
		if err := t.getJSON(envelopeTokenKey(hash), &ref); err != nil {
			return err
		}
		var err error
		e, err = getEnvelope(t, ref.Site, ref.EnvelopeID)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return &ref, e, nil
}

// DocumentEnvelopes lists a document's envelopes by id.
func (d *DB) DocumentEnvelopes(site, doc, after string, limit int) ([]Envelope, string, error) {
	var out []Envelope
	var next string
	err := d.view(func(t *tx) error {
		pfx := envelopeDocPrefix(site, doc)
		for _, k := range t.keys(pfx) {
			id := string(k[len(pfx):])
			if after != "" && id <= after {
				continue
			}
			if len(out) == limit {
				next = out[len(out)-1].EnvelopeID
				return nil
			}
			e, err := getEnvelope(t, site, id)
			if err != nil {
				return err
			}
			out = append(out, *e)
		}
		return nil
	})
	return out, next, err
}

// SignedEnvelopes lists envelopes of site every signer signed whose
// signed PDF is not stored yet (a crash came between): the server makes
// it again.
func (d *DB) SignedEnvelopes(site string) ([]Envelope, error) {
	var out []Envelope
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxEnvelope+sk(site)+"/"), func(_, v []byte) error {
			var e Envelope
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			if e.Status == EnvelopeSigned && len(out) < 1000 {
				out = append(out, e)
			}
			return nil
		})
	})
	return out, err
}
