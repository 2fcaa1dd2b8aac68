package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Webhook is an intake point for external payloads (FormKiQ's webhooks,
// SERVICE-SPEC.md §2.9): each payload posted to it becomes a document at
// webhooks/<id>, with the webhook's tags and actions.
type Webhook struct {
	WebhookID string `json:"webhookId"`
	Name      string `json:"name"`
	Enabled   bool   `json:"enabled"`
	// TTL is the time to live in seconds from insertion (0: forever);
	// ExpiresAt is InsertedDate plus TTL.
	TTL       int64      `json:"ttl,omitempty"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	Tags      []Tag      `json:"tags,omitempty"`
	// Actions are queued on every document the webhook takes in (Quire's
	// addition, see API.md).
	Actions      []Action  `json:"actions,omitempty"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// Webhook limits (API.md "Limits").
const (
	// MaxWebhooksPerSite bounds a site's webhooks whatever its
	// maxWebhooks setting says.
	MaxWebhooksPerSite = 1000
	// MaxWebhookTTL is the longest time to live: ten years.
	MaxWebhookTTL = 10 * 365 * 24 * 3600
	// MaxIdempotencyKeyBytes bounds an Idempotency-Key header.
	MaxIdempotencyKeyBytes = 256
	// IdempotencyWindow is how long a repeated Idempotency-Key answers the
	// first document instead of creating another.
	IdempotencyWindow = 24 * time.Hour
)

// MsgMaxWebhooks is FormKiQ's answer when a site has its maxWebhooks.
const MsgMaxWebhooks = "Reached max number of webhooks"

// WebhookNotFound is FormKiQ's not-found answer for a webhook. The Java
// handler's message has a literal 'id' instead of the id; clients that
// match on it get the same text here.
func WebhookNotFound() error { return &NotFoundError{Msg: "Webhook 'id' not found"} }

// LimitError refuses a write that a limit or a state forbids for now
// (FormKiQ's TooManyRequestsException: 429).
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// RequestError refuses a request the way FormKiQ's BadException does: a
// 400 with {"message"} rather than a list of field errors.
type RequestError struct{ Msg string }

func (e *RequestError) Error() string { return e.Msg }

// PutWebhook is the payload of OpPutWebhook: a new webhook (Create), or
// the fields of an existing one to change (nil: unchanged).
type PutWebhook struct {
	WebhookID string    `json:"webhookId"`
	Create    bool      `json:"create,omitempty"`
	Name      *string   `json:"name,omitempty"`
	Enabled   *bool     `json:"enabled,omitempty"`
	TTL       *int64    `json:"ttl,omitempty"`
	Tags      *[]Tag    `json:"tags,omitempty"`
	Actions   *[]Action `json:"actions,omitempty"`
}

// DeleteWebhook is the payload of OpDeleteWebhook.
type DeleteWebhook struct {
	WebhookID string `json:"webhookId"`
}

// AddWebhookTag is the payload of OpAddWebhookTag: the tag replaces one
// with the same key.
type AddWebhookTag struct {
	WebhookID string `json:"webhookId"`
	Tag       Tag    `json:"tag"`
}

// AddWebhookDocument is the payload of OpAddWebhookDocument: a payload
// posted to a webhook. The applier fills in the document's path, user,
// tags and actions from the webhook as it is when the command applies.
type AddWebhookDocument struct {
	WebhookID string `json:"webhookId"`
	// IdempotencyKey is the SHA-256 (hex) of the request's
	// Idempotency-Key header, or "".
	IdempotencyKey string      `json:"idempotencyKey,omitempty"`
	Doc            NewDocument `json:"doc"`
}

// WebhookDocumentResult is what OpAddWebhookDocument returns: the
// document created, or the one an earlier request with the same
// Idempotency-Key created (Repeat).
type WebhookDocumentResult struct {
	DocumentID string `json:"documentId"`
	Repeat     bool   `json:"repeat,omitempty"`
}

// idempotencyRecord remembers the document of an Idempotency-Key.
type idempotencyRecord struct {
	DocumentID   string    `json:"documentId"`
	InsertedDate time.Time `json:"insertedDate"`
}

// CheckWebhookTags validates a webhook's tags as document tags.
func CheckWebhookTags(tags []Tag) []ValidationItem { return CheckTags("tags", tags) }

// Expired reports whether w no longer takes payloads at time at.
func (w *Webhook) Expired(at time.Time) bool { return w.ExpiresAt != nil && !at.Before(*w.ExpiresAt) }

func getWebhook(t *tx, site, id string) (*Webhook, error) {
	var w Webhook
	err := t.getJSON(webhookKey(site, id), &w)
	if errors.Is(err, ErrNotFound) {
		return nil, WebhookNotFound()
	}
	if err != nil {
		return nil, err
	}
	return &w, nil
}

func applyPutWebhook(t *tx, c *Command) (any, error) {
	p, err := decode[PutWebhook](c)
	if err != nil {
		return nil, err
	}
	var w *Webhook
	if p.Create {
		if ok, err := t.exists(webhookKey(c.Site, p.WebhookID)); err != nil {
			return nil, err
		} else if ok {
			return nil, &ConflictError{Msg: fmt.Sprintf("webhook '%s' already exists", p.WebhookID)}
		}
		if err := checkWebhookCount(t, c.Site); err != nil {
			return nil, err
		}
		w = &Webhook{WebhookID: p.WebhookID, Enabled: true, UserID: c.User, InsertedDate: c.At}
	} else if w, err = getWebhook(t, c.Site, p.WebhookID); err != nil {
		return nil, err
	}
	if p.Name != nil {
		w.Name = *p.Name
	}
	if p.Enabled != nil {
		w.Enabled = *p.Enabled
	}
	if p.TTL != nil {
		w.TTL, w.ExpiresAt = *p.TTL, nil
		if w.TTL > 0 {
			e := w.InsertedDate.Add(time.Duration(w.TTL) * time.Second)
			w.ExpiresAt = &e
		}
	}
	if p.Tags != nil {
		w.Tags = stampTags(*p.Tags, c)
	}
	if p.Actions != nil {
		w.Actions = *p.Actions
	}
	if err := checkWebhook(w); err != nil {
		return nil, err
	}
	if err := t.setJSON(webhookKey(c.Site, w.WebhookID), w); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// checkWebhook bounds what one webhook record holds.
func checkWebhook(w *Webhook) error {
	if w.Name == "" {
		return Invalid("name", "'name' is required")
	}
	if err := checkName("name", w.Name); err != nil {
		return err
	}
	if w.TTL < 0 || w.TTL > MaxWebhookTTL {
		return Invalid("ttl", fmt.Sprintf("'ttl' must be between 1 and %d seconds", MaxWebhookTTL))
	}
	if errs := CheckWebhookTags(w.Tags); len(errs) > 0 {
		return &ValidationError{Items: errs}
	}
	if len(w.Actions) > MaxActionsPerRequest {
		return Invalid("actions", fmt.Sprintf("maximum number of actions is %d", MaxActionsPerRequest))
	}
	return nil
}

// stampTags gives tags the command's user and time and FormKiQ's type.
func stampTags(tags []Tag, c *Command) []Tag {
	out := make([]Tag, len(tags))
	for i, tg := range tags {
		tg.Type, tg.UserID, tg.InsertedDate, tg.DocumentID = TagUserDefined, c.User, c.At, ""
		out[i] = tg
	}
	return out
}

// checkWebhookCount refuses a new webhook when the site has its
// maxWebhooks (or MaxWebhooksPerSite).
func checkWebhookCount(t *tx, site string) error {
	c, err := siteConfigIn(t, site)
	if err != nil {
		return err
	}
	limit := int64(MaxWebhooksPerSite)
	if l, ok := ParseSiteLimit(c.MaxWebhooks); ok && l > 0 && l < limit {
		limit = l
	}
	if int64(t.count(webhookPrefix(site))) >= limit {
		return &LimitError{Msg: MsgMaxWebhooks}
	}
	return nil
}

func applyDeleteWebhook(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteWebhook](c)
	if err != nil {
		return nil, err
	}
	if _, err := getWebhook(t, c.Site, p.WebhookID); err != nil {
		return nil, err
	}
	for _, k := range t.keys(idempotencyPrefix(c.Site, p.WebhookID)) {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	return nil, t.del(webhookKey(c.Site, p.WebhookID))
}

func applyAddWebhookTag(t *tx, c *Command) (any, error) {
	p, err := decode[AddWebhookTag](c)
	if err != nil {
		return nil, err
	}
	w, err := getWebhook(t, c.Site, p.WebhookID)
	if err != nil {
		return nil, err
	}
	tags := make([]Tag, 0, len(w.Tags)+1)
	for _, tg := range w.Tags {
		if tg.Key != p.Tag.Key {
			tags = append(tags, tg)
		}
	}
	w.Tags = append(tags, stampTags([]Tag{p.Tag}, c)...)
	if err := checkWebhook(w); err != nil {
		return nil, err
	}
	return nil, t.setJSON(webhookKey(c.Site, w.WebhookID), w)
}

func applyAddWebhookDocument(t *tx, c *Command) (any, error) {
	p, err := decode[AddWebhookDocument](c)
	if err != nil {
		return nil, err
	}
	w, err := getWebhook(t, c.Site, p.WebhookID)
	if err != nil {
		return nil, err
	}
	if w.Expired(c.At) {
		return nil, &RequestError{Msg: "webhook is expired"}
	}
	if !w.Enabled {
		return nil, &LimitError{Msg: "webhook is disabled"}
	}
	if len(p.IdempotencyKey) > 2*MaxIdempotencyKeyBytes {
		return nil, Invalid("Idempotency-Key", "invalid Idempotency-Key")
	}
	var ik []byte
	if p.IdempotencyKey != "" {
		ik = idempotencyKey(c.Site, w.WebhookID, p.IdempotencyKey)
		var rec idempotencyRecord
		switch err := t.getJSON(ik, &rec); {
		case err == nil && c.At.Sub(rec.InsertedDate) < IdempotencyWindow:
			return &WebhookDocumentResult{DocumentID: rec.DocumentID, Repeat: true}, nil
		case err != nil && !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	nd := p.Doc
	d := &nd.Document
	d.Path = "webhooks/" + w.WebhookID
	d.UserID = "webhook/" + w.Name
	nd.Tags = make([]Tag, len(w.Tags))
	for i, tg := range w.Tags {
		tg.UserID, tg.InsertedDate = d.UserID, c.At
		nd.Tags[i] = tg
	}
	nd.Actions = make([]Action, len(w.Actions))
	copy(nd.Actions, w.Actions)
	data, err := json.Marshal(AddDocuments{Docs: []NewDocument{nd}})
	if err != nil {
		return nil, err
	}
	sub := &Command{Op: OpAddDocuments, Site: c.Site, User: d.UserID, At: c.At, Rules: c.Rules, Data: data}
	if _, err := applyAddDocuments(t, sub); err != nil {
		return nil, err
	}
	if ik != nil {
		if err := t.setJSON(ik, idempotencyRecord{DocumentID: d.DocumentID, InsertedDate: c.At}); err != nil {
			return nil, err
		}
	}
	return &WebhookDocumentResult{DocumentID: d.DocumentID}, nil
}

// GetWebhook returns one webhook.
func (d *DB) GetWebhook(site, id string) (*Webhook, error) {
	var w *Webhook
	err := d.view(func(t *tx) error {
		var err error
		w, err = getWebhook(t, site, id)
		return err
	})
	return w, err
}

// Webhooks lists a site's webhooks by id after after.
func (d *DB) Webhooks(site, after string, limit int) ([]Webhook, string, error) {
	return listPage(d, webhookPrefix(site), after, limit, func(w *Webhook) string { return w.WebhookID })
}

// WebhookTTL formats a time to live as FormKiQ returns it (a string).
func WebhookTTL(w *Webhook) string {
	if w.TTL == 0 {
		return ""
	}
	return strconv.FormatInt(w.TTL, 10)
}
