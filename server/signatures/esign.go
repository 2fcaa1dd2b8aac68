package signatures

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"quire/auth"
	"quire/pipeline"
	"quire/pipeline/pdfwork"
	"quire/server/content"
	"quire/server/internal/api"
	"quire/storage"
)

// E-signature envelopes (API.md "E-signature"; storage/envelopes.go):
// DocuSign's paths under /esignature/{provider}, with the built-in
// `local` provider that mails each signer a link to a signing page Quire
// serves, and stores the signed PDF as an artifact when all have signed.

// esignProviders are the providers by path name; nil is one this server
// cannot reach.
var esignProviders = map[string]bool{"local": true, "docusign": false}

const (
	defaultEnvelopeDays = 30
	maxEnvelopeDays     = 365
	signingTokenBytes   = 24
)

func (s *Handlers) checkProvider(r *api.Request) error {
	p := r.Params("provider")
	ok, known := esignProviders[p]
	switch {
	case !known:
		return api.Invalid("provider", fmt.Sprintf("unknown e-signature provider '%s': use 'local'", p))
	case !ok:
		return api.Invalid("provider", "the docusign provider needs DocuSign's cloud service, which this server does not use: use 'local'")
	}
	return nil
}

// newSigningToken returns a signing token and its hash.
func newSigningToken() (string, string) {
	b := make([]byte, signingTokenBytes)
	rand.Read(b)
	tok := base64.RawURLEncoding.EncodeToString(b)
	return tok, tokenHash(tok)
}

func tokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

type envelopeSignerIn struct {
	Name           string `json:"name"`
	Email          string `json:"email"`
	ClientUserID   string `json:"clientUserId"`
	RecipientID    string `json:"recipientId"`
	RoutingOrder   any    `json:"routingOrder"`
	SuppressEmails bool   `json:"suppressEmails"`
}

type envelopeIn struct {
	EmailSubject     string             `json:"emailSubject"`
	Environment      string             `json:"environment"`
	Status           string             `json:"status"`
	Signers          []envelopeSignerIn `json:"signers"`
	InpersonSigners  []any              `json:"inpersonSigners"`
	EmbeddedStartURL string             `json:"embeddedRecipientStartUrl"`
	Notification     *struct {
		Expirations *struct {
			ExpireAfter   any  `json:"expireAfter"`
			ExpireEnabled bool `json:"expireEnabled"`
		} `json:"expirations"`
	} `json:"notification"`
}

// routingOrder reads DocuSign's routingOrder (a number or a numeric
// string), 1 when absent.
func routingOrder(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return 1, true
	case float64:
		if x >= 1 && x <= 100 && x == float64(int(x)) {
			return int(x), true
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 1 && n <= 100 {
			return n, true
		}
	}
	return 0, false
}

// HandleAddEnvelope serves POST /esignature/{provider}/{documentId}/envelopes.
func (s *Handlers) HandleAddEnvelope(r *api.Request) error {
	if err := s.Content.RequireGovernIfMarked(r, r.PathDocID()); err != nil {
		return err
	}
	if err := s.checkProvider(r); err != nil {
		return err
	}
	var in envelopeIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	fail := func(k, m string) { errs = append(errs, storage.ValidationItem{Key: k, Msg: m}) }
	env := in.Environment
	if env == "" {
		env = s.Deps.ESignatureEnv
	}
	if env == "" {
		env = "PRODUCTION"
	}
	if env != "PRODUCTION" && env != "DEVELOPMENT" {
		fail("environment", "invalid 'environment', use PRODUCTION or DEVELOPMENT")
	}
	status := in.Status
	if status == "" {
		status = storage.EnvelopeSent
	}
	if status != storage.EnvelopeSent && status != storage.EnvelopeCreated {
		fail("status", "invalid 'status', use created (a draft) or sent")
	}
	if len(in.InpersonSigners) > 0 {
		fail("inpersonSigners", "in-person signing is not offered by the local provider")
	}
	if len(in.EmailSubject) > storage.MaxEnvelopeTextBytes {
		fail("emailSubject", "'emailSubject' is too long")
	}
	if in.EmbeddedStartURL != "" {
		if u, err := url.Parse(in.EmbeddedStartURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			fail("embeddedRecipientStartUrl", "invalid 'embeddedRecipientStartUrl'")
		}
	}
	if len(in.Signers) == 0 {
		fail("signers", "'signers' is required")
	}
	if len(in.Signers) > storage.MaxEnvelopeSigners {
		fail("signers", fmt.Sprintf("at most %d signers", storage.MaxEnvelopeSigners))
	}
	days := defaultEnvelopeDays
	if n := in.Notification; n != nil && n.Expirations != nil && n.Expirations.ExpireEnabled {
		d, ok := routingOrder(n.Expirations.ExpireAfter)
		if !ok || d > maxEnvelopeDays {
			fail("notification.expirations.expireAfter", fmt.Sprintf("'expireAfter' is 1 to %d days", maxEnvelopeDays))
		}
		days = d
	}
	e := storage.Envelope{EnvelopeID: r.NewID(), DocumentID: r.PathDocID(), ArtifactID: r.ArtifactID, Provider: r.Params("provider"),
		EmailSubject: in.EmailSubject, Environment: env, EmbeddedStartURL: in.EmbeddedStartURL, ExpiresAt: r.Now.AddDate(0, 0, days)}
	seen := map[string]bool{}
	for i, sg := range in.Signers {
		k := fmt.Sprintf("signers[%d]", i)
		if strings.TrimSpace(sg.Name) == "" || len(sg.Name) > 256 {
			fail(k+".name", "'name' is required")
		}
		if sg.Email == "" && sg.ClientUserID == "" {
			fail(k+".email", "'email' is required (or 'clientUserId' for embedded signing)")
		}
		if sg.Email != "" && !pipeline.ValidEmail(sg.Email) {
			fail(k+".email", "invalid 'email'")
		}
		order, ok := routingOrder(sg.RoutingOrder)
		if !ok {
			fail(k+".routingOrder", "'routingOrder' is 1 to 100")
		}
		id := sg.RecipientID
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		if seen[id] || len(id) > 64 {
			fail(k+".recipientId", "'recipientId' must be unique")
		}
		seen[id] = true
		cu := sg.ClientUserID
		if sg.SuppressEmails && cu == "" {
			cu = "suppressed"
		}
		e.Signers = append(e.Signers, storage.EnvelopeSigner{RecipientID: id, Name: sg.Name, Email: sg.Email, ClientUserID: cu, RoutingOrder: order})
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	if !strings.Contains(d.ContentType, "pdf") {
		return api.Invalid("documentId", "the local provider signs PDF documents")
	}
	p := storage.PutEnvelope{Envelope: e}
	var tokens map[string]string
	if status == storage.EnvelopeSent {
		p.Tokens, tokens = s.signerTokens(e.NextSigners())
	}
	res, err := s.Apply(r, storage.OpPutEnvelope, p)
	if err != nil {
		return err
	}
	out := map[string]any{"envelopeId": e.EnvelopeID}
	if ne, ok := res.Value.(*storage.Envelope); ok {
		// Whether each link went out by mail (issue 47): a signer whose
		// mail failed is told "not sent", and the sender may hand them
		// the link (views/recipient).
		sent := s.mailSigners(r.UserContext(), r.Site, ne, tokens)
		signers := make([]map[string]any, 0, len(sent))
		for _, o := range sent {
			m := map[string]any{"recipientId": o.RecipientID, "delivery": o.Status}
			if o.Message != "" {
				m["message"] = o.Message
			}
			signers = append(signers, m)
		}
		out["signers"] = signers
	}
	return r.JSON(out)
}

// signerTokens makes a token for each recipient: the hashes for the
// command, the tokens for the mails.
func (s *Handlers) signerTokens(ids []string) (storage.SignerTokens, map[string]string) {
	hashes, toks := storage.SignerTokens{}, map[string]string{}
	for _, id := range ids {
		tok, h := newSigningToken()
		hashes[id], toks[id] = h, tok
	}
	return hashes, toks
}

// signingURL is a signer's link: Quire's page, or the envelope's
// embeddedRecipientStartUrl (hybrid signing: the application asks for a
// recipient view itself).
func (s *Handlers) signingURL(e *storage.Envelope, sg *storage.EnvelopeSigner, tok string) string {
	if e.EmbeddedStartURL != "" && sg.ClientUserID != "" {
		recipient := sg.RecipientID
		q := url.Values{"envelopeId": {e.EnvelopeID}, "recipientId": {recipient}}
		sep := "?"
		if strings.Contains(e.EmbeddedStartURL, "?") {
			sep = "&"
		}
		return e.EmbeddedStartURL + sep + q.Encode()
	}
	return s.Deps.PublicURL + "/esign/" + tok
}

// mailOutcome is what a mail to one signer did.
type mailOutcome struct {
	RecipientID string `json:"recipientId"`
	Status      string `json:"status"` // sent, skipped, failed
	Message     string `json:"message,omitempty"`
}

// mailSigners mails each signer in tokens its link; embedded signers
// (clientUserId) get none.
func (s *Handlers) mailSigners(ctx context.Context, site string, e *storage.Envelope, tokens map[string]string) []mailOutcome {
	var out []mailOutcome
	for _, sg := range e.Signers {
		tok, ok := tokens[sg.RecipientID]
		if !ok {
			continue
		}
		o := mailOutcome{RecipientID: sg.RecipientID, Status: "sent"}
		switch {
		case sg.Email == "" || sg.ClientUserID == "suppressed" || (sg.ClientUserID != "" && e.EmbeddedStartURL == ""):
			o.Status, o.Message = "skipped", "embedded signer: use views/recipient"
		default:
			subject := e.EmailSubject
			if subject == "" {
				subject = "Please sign a document"
			}
			if e.Environment == "DEVELOPMENT" {
				subject = "[TEST] " + subject
			}
			text := fmt.Sprintf("Hello %s,\n\nyou are asked to sign a document. Open this link to read and sign it:\n\n%s\n\nThe link is yours alone; it works until %s.\n",
				sg.Name, s.signingURL(e, &sg, tok), e.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
			mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := s.Deps.Pipeline.SendSiteMail(mctx, site, sg.Email, subject, text)
			cancel()
			if err != nil {
				o.Status, o.Message = "failed", err.Error()
				s.Log.Warn("envelope mail failed", "envelopeId", e.EnvelopeID, "recipientId", sg.RecipientID, "err", err)
			}
		}
		out = append(out, o)
	}
	s.recordDelivery(ctx, site, e, out)
	return out
}

// recordDelivery keeps, on the envelope, whether each signer's mail went
// out (EnvelopeSigner.Delivery): views/recipient hands the link of a
// signer whose mail failed to the sender. A failure to record it is
// logged; the mails went (or not) already.
func (s *Handlers) recordDelivery(ctx context.Context, site string, e *storage.Envelope, out []mailOutcome) {
	d := map[string]string{}
	for _, o := range out {
		switch o.Status {
		case "sent":
			d[o.RecipientID] = storage.DeliverySent
		case "failed":
			d[o.RecipientID] = storage.DeliveryFailed
		}
	}
	if len(d) == 0 {
		return
	}
	if _, err := s.changeEnvelope(ctx, site, e.UserID, nil, storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionDelivery, Delivery: d}); err != nil {
		s.Log.Warn("envelope delivery not recorded", "envelopeId", e.EnvelopeID, "err", err)
	}
}

func envelopeJSON(e *storage.Envelope) map[string]any {
	signers := make([]map[string]any, 0, len(e.Signers))
	for _, sg := range e.Signers {
		m := map[string]any{"recipientId": sg.RecipientID, "name": sg.Name, "routingOrder": sg.RoutingOrder, "status": sg.Status}
		if sg.Email != "" {
			m["email"] = sg.Email
		}
		if sg.ClientUserID != "" && sg.ClientUserID != "suppressed" {
			m["clientUserId"] = sg.ClientUserID
		}
		if sg.SignedDate != nil {
			m["signedDate"] = api.FormatDate(*sg.SignedDate)
		}
		if sg.DeclineReason != "" {
			m["declinedReason"] = sg.DeclineReason
		}
		if sg.Delivery != "" {
			m["delivery"] = sg.Delivery
		}
		signers = append(signers, m)
	}
	m := map[string]any{"envelopeId": e.EnvelopeID, "documentId": e.DocumentID, "provider": e.Provider, "status": e.Status,
		"environment": e.Environment, "signers": signers, "insertedDate": api.FormatDate(e.InsertedDate),
		"lastModifiedDate": api.FormatDate(e.LastModifiedDate), "expirationDate": api.FormatDate(e.ExpiresAt)}
	opt := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	opt("artifactId", e.ArtifactID)
	opt("emailSubject", e.EmailSubject)
	opt("voidedReason", e.VoidedReason)
	opt("signedArtifactId", e.SignedArtifactID)
	opt("embeddedRecipientStartUrl", e.EmbeddedStartURL)
	opt("userId", e.UserID)
	opt("contentSha256", e.ContentSHA256)
	opt("contentVersionKey", e.ContentVersionKey)
	if e.CompletedDate != nil {
		m["completedDate"] = api.FormatDate(*e.CompletedDate)
	}
	return m
}

// envelopeOf reads the path's envelope, checking it belongs to the path's
// document and provider.
func (s *Handlers) envelopeOf(r *api.Request) (*storage.Envelope, error) {
	if err := s.checkProvider(r); err != nil {
		return nil, err
	}
	id := r.Params("envelopeId")
	e, err := s.DB.GetEnvelope(r.Site, id)
	if err != nil {
		return nil, err
	}
	if e.DocumentID != r.PathDocID() || e.Provider != r.Params("provider") {
		return nil, &storage.NotFoundError{Msg: fmt.Sprintf("Envelope '%s' not found", id)}
	}
	return e, nil
}

func (s *Handlers) HandleGetEnvelope(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	if e.Status == storage.EnvelopeSigned {
		if ce, err := s.completeEnvelope(r.UserContext(), r.Site, e, api.Via(r)); err == nil {
			e = ce
		}
	}
	return r.JSON(map[string]any{"envelope": envelopeJSON(e)})
}

func (s *Handlers) HandleGetEnvelopes(r *api.Request) error {
	if err := s.checkProvider(r); err != nil {
		return err
	}
	if _, err := s.DB.GetDocument(r.Site, r.PathDocID()); err != nil {
		return err
	}
	return api.KeyPage(r, "envelope", "envelopes", func(after string, limit int) ([]storage.Envelope, string, error) {
		return s.DB.DocumentEnvelopes(r.Site, r.PathDocID(), after, limit)
	}, func(e *storage.Envelope) map[string]any {
		if e.Provider != r.Params("provider") {
			return nil
		}
		return envelopeJSON(e)
	})
}

// changeEnvelope applies one transition through the applier.
func (s *Handlers) changeEnvelope(ctx context.Context, site, user string, v *storage.Via, ch storage.EnvelopeChange) (*storage.Envelope, error) {
	cmd, err := storage.NewCommand(storage.OpEnvelopeChange, site, user, s.Now(), ch)
	if err != nil {
		return nil, err
	}
	cmd.Via = v
	res, err := s.Deps.Applier.Apply(ctx, cmd)
	if err != nil {
		return nil, err
	}
	e, _ := res.Value.(*storage.Envelope)
	if e == nil {
		return nil, errors.New("envelope change: no envelope")
	}
	return e, nil
}

// HandleSendEnvelope serves POST .../envelopes/{envelopeId}/send: a draft
// goes to its first signers.
func (s *Handlers) HandleSendEnvelope(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	hashes, toks := s.signerTokens(e.NextSigners())
	ne, err := s.changeEnvelope(r.UserContext(), r.Site, r.User(), api.Via(r), storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionSend, Tokens: hashes})
	if err != nil {
		return err
	}
	s.mailSigners(r.UserContext(), r.Site, ne, toks)
	return r.JSON(api.MessageBody{Message: "Envelope sent"})
}

// HandleRecipientView serves POST .../views/recipient: a fresh signing
// link for a signer whose turn it is (embedded signing).
func (s *Handlers) HandleRecipientView(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	var in struct {
		RecipientView *struct {
			RecipientID  string `json:"recipientId"`
			Email        string `json:"email"`
			ClientUserID string `json:"clientUserId"`
			ReturnURL    string `json:"returnUrl"`
		} `json:"recipientView"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	v := in.RecipientView
	if v == nil {
		return api.Invalid("recipientView", "'recipientView' is required")
	}
	var who *storage.EnvelopeSigner
	for i := range e.Signers {
		sg := &e.Signers[i]
		if (v.RecipientID != "" && sg.RecipientID == v.RecipientID) || (v.RecipientID == "" && v.Email != "" && strings.EqualFold(sg.Email, v.Email)) ||
			(v.RecipientID == "" && v.ClientUserID != "" && sg.ClientUserID == v.ClientUserID) {
			who = sg
			break
		}
	}
	if who == nil {
		return api.Invalid("recipientView", "no such recipient in the envelope")
	}
	// DocuSign's clientUserId semantics (issue 29): only an embedded
	// recipient (one with a clientUserId, or suppressEmails) gets a
	// recipient view, and only through the envelope's sender; a remote
	// signer signs only through the link mailed to them.
	if !isSender(r, e) {
		return &auth.Error{Status: http.StatusUnauthorized, Msg: "fkq access denied: only the envelope's sender (the user who created it), a site governor or an Admin can open a recipient view"}
	}
	// A remote signer whose mail failed (issue 47) is handed to the
	// sender like an embedded one: the link could not reach them.
	failed := who.ClientUserID == "" && who.Delivery == storage.DeliveryFailed && who.Status == storage.SignerSent
	if who.ClientUserID == "" && !failed {
		return api.Invalid("recipientView", fmt.Sprintf("recipient '%s' is a remote signer: they sign only through the link mailed to them", who.RecipientID))
	}
	if !failed && who.ClientUserID != "suppressed" && v.ClientUserID != who.ClientUserID {
		return api.Invalid("recipientView.clientUserId", fmt.Sprintf("'clientUserId' must be recipient '%s''s clientUserId", who.RecipientID))
	}
	if v.ReturnURL != "" {
		if u, err := url.Parse(v.ReturnURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
			return api.Invalid("recipientView.returnUrl", "invalid 'returnUrl'")
		}
	}
	tok, h := newSigningToken()
	if _, err := s.changeEnvelope(r.UserContext(), r.Site, r.User(), api.Via(r), storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionTokens,
		Tokens: storage.SignerTokens{who.RecipientID: h}}); err != nil {
		return err
	}
	u := s.LinkBase(r.Ctx) + "/esign/" + tok
	if v.ReturnURL != "" {
		u += "?returnUrl=" + url.QueryEscape(v.ReturnURL)
	}
	return r.JSON(map[string]any{"viewUrl": u})
}

// isSender reports whether the caller acts for the envelope's sender:
// the user (or API key) who created it, a governor of the site or an
// Admin.
func isSender(r *api.Request, e *storage.Envelope) bool {
	return api.FolderExempt(r) || (e.UserID != "" && r.User() == e.UserID)
}

// HandleSenderView serves POST .../views/sender: a signed link to the
// envelope's status page, valid one hour.
func (s *Handlers) HandleSenderView(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	exp := strconv.FormatInt(s.Now().Add(time.Hour).Unix(), 10)
	sig := auth.SignURL(s.Deps.Auth.URLKey(), http.MethodGet, "esign-status", r.Site, e.EnvelopeID, exp)
	q := url.Values{"siteId": {r.Site}, "expires": {exp}, "signature": {sig}}
	return r.JSON(map[string]any{"viewUrl": fmt.Sprintf("%s/esign-status/%s?%s", s.LinkBase(r.Ctx), e.EnvelopeID, q.Encode())})
}

// HandleEnvelopeReminders serves POST .../reminders {recipientIds}: each
// listed signer whose turn it is gets a new link by mail; the answer says
// what happened to each.
func (s *Handlers) HandleEnvelopeReminders(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	var in struct {
		RecipientIDs []string `json:"recipientIds"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if len(in.RecipientIDs) > storage.MaxEnvelopeSigners {
		return api.Invalid("recipientIds", fmt.Sprintf("at most %d recipientIds", storage.MaxEnvelopeSigners))
	}
	if e.Status != storage.EnvelopeSent {
		return &storage.ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s", e.EnvelopeID, e.Status)}
	}
	want := in.RecipientIDs
	if len(want) == 0 {
		want = e.NextSigners()
	}
	var out []mailOutcome
	send := storage.SignerTokens{}
	toks := map[string]string{}
	for _, id := range want {
		var sg *storage.EnvelopeSigner
		for i := range e.Signers {
			if e.Signers[i].RecipientID == id {
				sg = &e.Signers[i]
			}
		}
		switch {
		case sg == nil:
			out = append(out, mailOutcome{RecipientID: id, Status: "skipped", Message: "no such recipient"})
		case sg.Status != storage.SignerSent:
			out = append(out, mailOutcome{RecipientID: id, Status: "skipped", Message: "not waiting to sign (" + sg.Status + ")"})
		default:
			tok, h := newSigningToken()
			send[id], toks[id] = h, tok
		}
	}
	if len(send) > 0 {
		ne, err := s.changeEnvelope(r.UserContext(), r.Site, r.User(), api.Via(r), storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionTokens, Tokens: send})
		if err != nil {
			return err
		}
		out = append(out, s.mailSigners(r.UserContext(), r.Site, ne, toks)...)
	}
	return r.JSON(map[string]any{"recipients": out})
}

// HandleVoidEnvelope serves POST .../void {voidedReason}.
func (s *Handlers) HandleVoidEnvelope(r *api.Request) error {
	e, err := s.envelopeOf(r)
	if err != nil {
		return err
	}
	var in struct {
		VoidedReason string `json:"voidedReason"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if strings.TrimSpace(in.VoidedReason) == "" {
		return api.Invalid("voidedReason", "'voidedReason' is required")
	}
	if len(in.VoidedReason) > storage.MaxEnvelopeTextBytes {
		return api.Invalid("voidedReason", "'voidedReason' is too long")
	}
	if _, err := s.changeEnvelope(r.UserContext(), r.Site, r.User(), api.Via(r), storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionVoid, Reason: in.VoidedReason}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Envelope voided"})
}

// HandleEnvelopeEvents serves POST /esignature/{provider}/events: status
// events of a provider, {envelopeId, event}. Only envelope-completed
// completes, and only once the signed PDF is stored; recipient events
// change nothing; a terminal envelope never changes again, so events
// arriving twice or out of order are answered 200 and ignored.
func (s *Handlers) HandleEnvelopeEvents(r *api.Request) error {
	if err := s.checkProvider(r); err != nil {
		return err
	}
	var in struct {
		EnvelopeID string `json:"envelopeId"`
		Event      string `json:"event"`
		Reason     string `json:"reason"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.EnvelopeID == "" {
		return api.Invalid("envelopeId", "'envelopeId' is required")
	}
	e, err := s.DB.GetEnvelope(r.Site, in.EnvelopeID)
	if err != nil {
		return err
	}
	// The body names an envelope, so its document: WRITE in the
	// document's folder, as the envelope's own routes need (issue 29).
	if err := s.RequireDocOf(r, e.DocumentID, storage.FolderWrite); err != nil {
		return err
	}
	msg := func(m string) error { return r.JSON(api.MessageBody{Message: m}) }
	switch in.Event {
	case "envelope-completed":
		if storage.EnvelopeTerminal(e.Status) && e.Status != storage.EnvelopeCompleted {
			return msg(fmt.Sprintf("Envelope '%s' is already %s", e.EnvelopeID, e.Status))
		}
		if e.Status == storage.EnvelopeSigned {
			if e, err = s.completeEnvelope(r.UserContext(), r.Site, e, api.Via(r)); err != nil {
				return err
			}
		}
		if e.Status != storage.EnvelopeCompleted {
			return &storage.ConflictError{Msg: fmt.Sprintf("Envelope '%s' is %s: not every signer signed", e.EnvelopeID, e.Status)}
		}
		return msg("Envelope completed")
	case "envelope-voided", "envelope-declined":
		if storage.EnvelopeTerminal(e.Status) {
			return msg(fmt.Sprintf("Envelope '%s' is already %s", e.EnvelopeID, e.Status))
		}
		reason := in.Reason
		if reason == "" {
			reason = "provider event " + in.Event
		}
		if _, err := s.changeEnvelope(r.UserContext(), r.Site, r.User(), api.Via(r), storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionVoid, Reason: reason}); err != nil {
			return err
		}
		return msg("Envelope voided")
	case "recipient-sent", "recipient-delivered", "recipient-completed", "recipient-declined", "envelope-sent", "envelope-delivered":
		return msg("Event recorded")
	}
	return api.Invalid("event", "unknown 'event'")
}

// completeEnvelope makes the signed PDF of an envelope every signer
// signed and stores it as an artifact in the transaction that completes
// the envelope: completed always comes with its PDF, and a crash before
// leaves it signed, to be completed again (on the next read, event or
// leader start).
func (s *Handlers) completeEnvelope(ctx context.Context, site string, e *storage.Envelope, v *storage.Via) (*storage.Envelope, error) {
	// The signed copy is made of the bytes the envelope was sent with
	// (issue 29); when they are no longer the document's, or are gone, the
	// applier voids the envelope instead of completing it.
	d, rd, err := s.envelopeContent(site, e)
	if err != nil {
		if !api.IsNotFound(err) && !errors.Is(err, errEnvelopeContentChanged) {
			return nil, err
		}
		return s.changeEnvelope(ctx, site, e.UserID, v, storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionComplete})
	}
	defer rd.Close()
	page := pdfwork.SignaturePage{Title: e.EmailSubject, Reference: fmt.Sprintf("Envelope %s, document %s", e.EnvelopeID, d.Path),
		Development: e.Environment == "DEVELOPMENT"}
	for _, sg := range e.Signers {
		entry := pdfwork.SignatureEntry{Name: sg.Name, Email: sg.Email, TypedName: sg.TypedName, Drawing: sg.Drawing}
		if sg.SignedDate != nil {
			entry.SignedDate = *sg.SignedDate
		}
		page.Signers = append(page.Signers, entry)
	}
	g, err := s.Deps.Pipeline.SignedCopy(ctx, rd, page)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	out := g.File
	if s.CertifyEnvelope != nil {
		if out, err = s.CertifyEnvelope(ctx, site, g.File); err != nil {
			return nil, err
		}
		if out != g.File {
			defer out.Close()
		}
	}
	m, tail, err := storage.WriteContent(ctx, s.Deps.Applier, out, 0, nil)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(d.Path, ".pdf")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	art := storage.NewDocument{Document: storage.Document{DocumentID: uuid.NewString(), Path: name + "-signed.pdf", ContentType: "application/pdf",
		ArtifactCategory: "SIGNED", UserID: e.UserID}, Content: &m, Chunks: tail}
	ne, err := s.changeEnvelope(ctx, site, e.UserID, v, storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, Action: storage.EnvelopeActionComplete, Artifact: &art, SourceSHA256: e.ContentSHA256})
	var ce *storage.ConflictError
	if errors.As(err, &ce) {
		return s.DB.GetEnvelope(site, e.EnvelopeID) // completed meanwhile
	}
	return ne, err
}

var errEnvelopeContentChanged = errors.New(storage.EnvelopeContentChanged)

// envelopeContent opens the content e was sent with: its document (or
// artifact) record and a reader of exactly the recorded bytes.
// errEnvelopeContentChanged when the document no longer holds them.
func (s *Handlers) envelopeContent(site string, e *storage.Envelope) (*storage.Document, *storage.ContentReader, error) {
	rec := e.DocumentID
	if e.ArtifactID != "" {
		rec = e.ArtifactID
	}
	d, err := s.DB.GetDocumentAny(site, rec)
	if err != nil {
		return nil, nil, err
	}
	if e.ContentSHA256 == "" || d.ContentSHA256 != e.ContentSHA256 {
		return nil, nil, errEnvelopeContentChanged
	}
	rd, err := s.DB.OpenManifest(e.ContentSHA256)
	if err != nil {
		return nil, nil, err
	}
	return d, rd, nil
}

// ResumeSignedEnvelopes completes the envelopes a crash left signed (the
// leader, at start).
func (s *Handlers) ResumeSignedEnvelopes(ctx context.Context) {
	sites, err := s.DB.Sites()
	if err != nil {
		return
	}
	for _, site := range sites {
		es, err := s.DB.SignedEnvelopes(site)
		if err != nil {
			continue
		}
		for i := range es {
			if _, err := s.completeEnvelope(ctx, site, &es[i], &storage.Via{Source: storage.SourceSystem}); err != nil {
				s.Log.Warn("completing a signed envelope", "site", site, "envelopeId", es[i].EnvelopeID, "err", err)
			}
		}
	}
}

//go:embed esign.html
var signingPageHTML string

var signingPage = template.Must(template.New("sign").Parse(signingPageHTML))

// signingContext reads the envelope and signer of a token; any failure is
// the same 404, so a token tells nothing unless it is one.
func (s *Handlers) signingContext(c *fiber.Ctx) (*storage.EnvelopeTokenRef, *storage.Envelope, *storage.EnvelopeSigner, error) {
	tok := c.Params("token")
	notFound := api.ErrStatus(http.StatusNotFound, "This signing link is not valid (it was used, replaced, or the envelope ended).")
	if len(tok) > 64 {
		return nil, nil, nil, notFound
	}
	ref, e, err := s.DB.EnvelopeByToken(tokenHash(tok))
	if err != nil {
		return nil, nil, nil, notFound
	}
	for i := range e.Signers {
		if e.Signers[i].RecipientID == ref.RecipientID {
			return ref, e, &e.Signers[i], nil
		}
	}
	return nil, nil, nil, notFound
}

// HandleSigningPage serves GET /esign/{token}: the page a signer signs on.
func (s *Handlers) HandleSigningPage(c *fiber.Ctx) error {
	ref, e, sg, err := s.signingContext(c)
	if err != nil {
		return err
	}
	_, rd, err := s.envelopeContent(ref.Site, e)
	if errors.Is(err, errEnvelopeContentChanged) || api.IsNotFound(err) {
		return api.ErrStatus(http.StatusConflict, "This document changed after it was sent for signing: it cannot be signed. Ask the sender to send it again.")
	}
	if err != nil {
		return err
	}
	rd.Close()
	expired := !s.Now().Before(e.ExpiresAt)
	ret := c.Query("returnUrl")
	if u, err := url.Parse(ret); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		ret = ""
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; frame-src 'self' "+s.LinkBase(c))
	c.Set(fiber.HeaderContentType, "text/html; charset=utf-8")
	c.Set("Referrer-Policy", "no-referrer")
	return signingPage.Execute(c.Response().BodyWriter(), map[string]any{
		"Subject": e.EmailSubject, "Name": sg.Name, "PDF": s.LinkBase(c) + "/esign/" + url.PathEscape(c.Params("token")) + "/document",
		"Development": e.Environment == "DEVELOPMENT", "Expired": expired, "Expires": e.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"),
		"ReturnURL": ret,
	})
}

// HandleSigningDocument serves GET /esign/{token}/document: the exact
// bytes the envelope was sent with, which are what the signer signs
// (issue 29); none once the document's content changed.
func (s *Handlers) HandleSigningDocument(c *fiber.Ctx) error {
	ref, e, _, err := s.signingContext(c)
	if err != nil {
		return err
	}
	_, rd, err := s.envelopeContent(ref.Site, e)
	if errors.Is(err, errEnvelopeContentChanged) || api.IsNotFound(err) {
		return api.ErrStatus(http.StatusConflict, "This document changed after it was sent for signing: it cannot be signed.")
	}
	if err != nil {
		return err
	}
	api.ServeStored(c, api.StoredFile{ContentType: "application/pdf", Inline: true})
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderETag, `"`+e.ContentSHA256+`"`)
	size := rd.Size()
	if c.Method() == http.MethodHead {
		rd.Close()
		c.Response().Header.SetContentLength(int(size))
		return nil
	}
	c.Response().SetBodyStream(&content.ClosingReader{Reader: rd, C: rd}, int(size))
	return nil
}

// HandleSigningSubmit serves POST /esign/{token}: {action: sign|decline,
// typedName, drawing (a data: URL of a PNG), reason}.
func (s *Handlers) HandleSigningSubmit(c *fiber.Ctx) error {
	ref, e, sg, err := s.signingContext(c)
	if err != nil {
		return err
	}
	var in struct {
		Action    string `json:"action"`
		TypedName string `json:"typedName"`
		Drawing   string `json:"drawing"`
		Reason    string `json:"reason"`
	}
	if err := s.PublicCtx(c, ref.Site).ReadBody(&in, 1<<20); err != nil {
		return err
	}
	ch := storage.EnvelopeChange{EnvelopeID: e.EnvelopeID, RecipientID: sg.RecipientID, TokenHash: tokenHash(c.Params("token"))}
	switch in.Action {
	case "sign":
		ch.Action, ch.TypedName = storage.EnvelopeActionSign, strings.TrimSpace(in.TypedName)
		if len(ch.TypedName) > 256 {
			return api.Invalid("typedName", "'typedName' is too long")
		}
		if in.Drawing != "" {
			b64, ok := strings.CutPrefix(in.Drawing, "data:image/png;base64,")
			png, err := base64.StdEncoding.DecodeString(b64)
			if !ok || err != nil || len(png) > storage.MaxSignatureDrawing {
				return api.Invalid("drawing", "'drawing' must be a PNG data URL under 256 KiB")
			}
			ch.Drawing = png
		}
	case "decline":
		ch.Action, ch.Reason = storage.EnvelopeActionDecline, in.Reason
		if len(ch.Reason) > storage.MaxEnvelopeTextBytes {
			return api.Invalid("reason", "'reason' is too long")
		}
	default:
		return api.Invalid("action", "invalid 'action', use sign or decline")
	}
	// The next routing order's tokens go with the signature, in one write.
	var toks map[string]string
	if ch.Action == storage.EnvelopeActionSign {
		after := *e
		after.Signers = append([]storage.EnvelopeSigner(nil), e.Signers...)
		for i := range after.Signers {
			if after.Signers[i].RecipientID == sg.RecipientID {
				after.Signers[i].Status = storage.SignerCompleted
			}
		}
		var next []string
		for _, id := range after.NextSigners() {
			for _, x := range after.Signers {
				if x.RecipientID == id && x.Status == storage.SignerCreated {
					next = append(next, id)
				}
			}
		}
		ch.Tokens, toks = s.signerTokens(next)
	}
	v := &storage.Via{RequestID: api.RequestID(c), Source: "signer", Actor: sg.Email}
	ne, err := s.changeEnvelope(c.UserContext(), ref.Site, "esign/"+sg.Name, v, ch)
	if err != nil {
		return err
	}
	if ch.Action == storage.EnvelopeActionSign && ne.Status == storage.EnvelopeVoided {
		return &storage.ConflictError{Msg: "This document changed after it was sent for signing: nothing was signed and the envelope is void. Ask the sender to send it again."}
	}
	s.mailSigners(c.UserContext(), ref.Site, ne, toks)
	if ne.Status == storage.EnvelopeSigned {
		if ce, err := s.completeEnvelope(c.UserContext(), ref.Site, ne, v); err != nil {
			s.Log.Warn("completing an envelope", "envelopeId", ne.EnvelopeID, "err", err)
		} else {
			ne = ce
		}
	}
	return c.JSON(map[string]any{"status": ne.Status})
}

// HandleEnvelopeStatusPage serves GET /esign-status/{envelopeId}: the
// sender view, a signed link from views/sender.
func (s *Handlers) HandleEnvelopeStatusPage(c *fiber.Ctx) error {
	site, id, exp := strings.Clone(c.Query("siteId")), strings.Clone(c.Params("envelopeId")), strings.Clone(c.Query("expires"))
	if !s.Deps.Auth.VerifyURL(c.Query("signature"), http.MethodGet, "esign-status", site, id, exp) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	e, err := s.DB.GetEnvelope(site, id)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.JSON(map[string]any{"envelope": envelopeJSON(e)})
}
