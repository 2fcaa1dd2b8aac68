package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/storage"
)

// Webhooks (SERVICE-SPEC.md §2.9, §4.4; API.md "Webhooks"): management
// routes for site governors, and the two intake routes that turn a posted
// payload into a document.

// webhookIn is FormKiQ's AddWebhookRequest, plus Quire's actions.
type webhookIn struct {
	Name    *string    `json:"name"`
	TTL     flexString `json:"ttl"`
	Enabled flexBool   `json:"enabled"`
	Tags    []tagIn    `json:"tags"`
	Actions []actionIn `json:"actions"`
}

// readWebhook validates a webhook body into the command's fields; create
// requires a name.
func (s *Server) readWebhook(r *reqCtx, create bool) (storage.PutWebhook, error) {
	var in webhookIn
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return storage.PutWebhook{}, err
	}
	var p storage.PutWebhook
	var errs []storage.ValidationItem
	add := func(key, msg string) { errs = append(errs, storage.ValidationItem{Key: key, Msg: msg}) }
	switch {
	case in.Name != nil && strings.TrimSpace(*in.Name) != "":
		p.Name = in.Name
	case create || in.Name != nil:
		add("name", "'name' is required")
	}
	if in.Enabled.set {
		switch strings.ToLower(in.Enabled.v) {
		case "true":
			p.Enabled = ptr(true)
		case "false":
			p.Enabled = ptr(false)
		default:
			add("enabled", "invalid 'enabled': \"true\" or \"false\"")
		}
	}
	if in.TTL.set {
		n, err := strconv.ParseInt(in.TTL.v, 10, 64)
		if err != nil || n < 1 || n > storage.MaxWebhookTTL {
			add("ttl", fmt.Sprintf("'ttl' must be between 1 and %d seconds", storage.MaxWebhookTTL))
		}
		p.TTL = &n
	}
	if in.Tags != nil {
		tags, terrs := convertTags(in.Tags, "tags")
		errs = append(errs, terrs...)
		p.Tags = &tags
	}
	if in.Actions != nil {
		acts, aerrs := s.convertActions(r, in.Actions)
		errs = append(errs, aerrs...)
		s.stampActionRights(r, acts)
		p.Actions = &acts
	}
	return p, checkErrors(errs)
}

func ptr[T any](v T) *T { return &v }

// flexBool accepts FormKiQ's "true"/"false" strings and JSON booleans.
type flexBool struct{ flexString }

func (f *flexBool) UnmarshalJSON(b []byte) error {
	if s := string(b); s == "true" || s == "false" {
		f.set, f.v = true, s
		return nil
	}
	return f.flexString.UnmarshalJSON(b)
}

// webhookURL is where a webhook takes payloads.
func (s *Server) webhookURL(base, site, id string) string {
	u := strings.TrimSuffix(base, "/") + "/public/webhooks/" + url.PathEscape(id)
	if site != auth.DefaultSite {
		u += "?siteId=" + url.QueryEscape(site)
	}
	return u
}

func (s *Server) webhookJSON(base, site string, w *storage.Webhook) map[string]any {
	m := map[string]any{
		"siteId":       site,
		"webhookId":    w.WebhookID,
		"name":         w.Name,
		"url":          s.webhookURL(base, site, w.WebhookID),
		"insertedDate": formatDate(w.InsertedDate),
		"userId":       w.UserID,
		"enabled":      strconv.FormatBool(w.Enabled),
		"tags":         webhookTagsJSON(w),
	}
	if ttl := storage.WebhookTTL(w); ttl != "" {
		m["ttl"] = ttl
	}
	return m
}

func webhookTagsJSON(w *storage.Webhook) []map[string]any {
	out := make([]map[string]any, 0, len(w.Tags))
	for _, tg := range w.Tags {
		m := map[string]any{"key": tg.Key, "webhookId": w.WebhookID, "type": tg.Type,
			"userId": tg.UserID, "insertedDate": formatDate(tg.InsertedDate)}
		if len(tg.Values) > 0 {
			m["values"] = tg.Values
		} else {
			m["value"] = tg.Value
		}
		out = append(out, m)
	}
	return out
}

// handleAddWebhook serves POST /webhooks.
func (s *Server) handleAddWebhook(r *reqCtx) error {
	p, err := s.readWebhook(r, true)
	if err != nil {
		return err
	}
	p.WebhookID, p.Create = r.newID(), true
	if _, err := s.apply(r, storage.OpPutWebhook, p); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"webhookId": p.WebhookID, "siteId": r.site})
}

// handleGetWebhooks serves GET /webhooks.
func (s *Server) handleGetWebhooks(r *reqCtx) error {
	return keyPage(r, "wh", "webhooks", func(after string, limit int) ([]storage.Webhook, string, error) {
		return s.db.Webhooks(r.site, after, limit)
	}, func(w *storage.Webhook) map[string]any { return s.webhookJSON(s.linkBase(r.Ctx), r.site, w) })
}

// handleGetWebhook serves GET /webhooks/{webhookId}.
func (s *Server) handleGetWebhook(r *reqCtx) error {
	w, err := s.db.GetWebhook(r.site, pathParam(r, "webhookId"))
	if err != nil {
		return err
	}
	return r.JSON(s.webhookJSON(s.linkBase(r.Ctx), r.site, w))
}

// handleUpdateWebhook serves PATCH /webhooks/{webhookId}.
func (s *Server) handleUpdateWebhook(r *reqCtx) error {
	p, err := s.readWebhook(r, false)
	if err != nil {
		return err
	}
	p.WebhookID = pathParam(r, "webhookId")
	if _, err := s.apply(r, storage.OpPutWebhook, p); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("'%s' object updated", p.WebhookID)})
}

// handleDeleteWebhook serves DELETE /webhooks/{webhookId}.
func (s *Server) handleDeleteWebhook(r *reqCtx) error {
	id := pathParam(r, "webhookId")
	if _, err := s.apply(r, storage.OpDeleteWebhook, storage.DeleteWebhook{WebhookID: id}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("'%s' object deleted", id)})
}

// handleGetWebhookTags serves GET /webhooks/{webhookId}/tags. A webhook
// holds at most storage.MaxTagsPerRequest tags: one page.
func (s *Server) handleGetWebhookTags(r *reqCtx) error {
	w, err := s.db.GetWebhook(r.site, pathParam(r, "webhookId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"tags": webhookTagsJSON(w)})
}

// handleAddWebhookTag serves POST /webhooks/{webhookId}/tags.
func (s *Server) handleAddWebhookTag(r *reqCtx) error {
	var in tagIn
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	tags, errs := convertTags([]tagIn{in}, "tag")
	if err := checkErrors(errs); err != nil {
		return err
	}
	id := pathParam(r, "webhookId")
	if _, err := s.apply(r, storage.OpAddWebhookTag, storage.AddWebhookTag{WebhookID: id, Tag: tags[0]}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(messageBody{fmt.Sprintf("Created Tag '%s'.", tags[0].Key)})
}

// errPublicWebhooksOff answers the public intake route on a server that
// has not opened it (config webhooks.public).
var errPublicWebhooksOff = errStatus(http.StatusNotFound, "public webhooks are not enabled on this server (webhooks.public)")

// handlePublicWebhook serves POST /public/webhooks/{webhooks+}: no token;
// the site is ?siteId= (default "default").
func (s *Server) handlePublicWebhook(c *fiber.Ctx) error {
	if !s.deps.PublicWebhooks {
		return errPublicWebhooksOff
	}
	if err := checkURLText(c); err != nil {
		return err
	}
	site := strings.Clone(c.Query("siteId"))
	if site == "" {
		site = auth.DefaultSite
	}
	if !storage.CheckSiteID(site) {
		return errStatus(http.StatusBadRequest, "invalid siteId")
	}
	p := &auth.Principal{Username: "public", Sites: map[string][]auth.Permission{}}
	return s.takeWebhook(&reqCtx{Ctx: c, p: p, site: site, now: s.now().UTC()}, false)
}

// handlePrivateWebhook serves POST /private/webhooks/{webhooks+}.
func (s *Server) handlePrivateWebhook(r *reqCtx) error { return s.takeWebhook(r, true) }

// takeWebhook stores the request body as sent (its content type kept) as
// a document of the webhook named by the path's first segment.
func (s *Server) takeWebhook(r *reqCtx, private bool) error {
	seg := strings.Trim(r.Params("*"), "/")
	id, _, _ := strings.Cut(seg, "/")
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	id = strings.Clone(id)
	if id == "" || len(id) > storage.MaxKeyBytes {
		return storage.WebhookNotFound()
	}
	var idem string
	if k := r.Get("Idempotency-Key"); k != "" {
		if len(k) > storage.MaxIdempotencyKeyBytes {
			return invalid("Idempotency-Key", fmt.Sprintf("'Idempotency-Key' must be at most %d bytes", storage.MaxIdempotencyKeyBytes))
		}
		sum := sha256.Sum256([]byte(k))
		idem = hex.EncodeToString(sum[:])
	}
	redirect := strings.Clone(r.Query("redirect_uri"))
	if redirect != "" {
		if u, err := url.Parse(redirect); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return invalid("redirect_uri", "invalid 'redirect_uri': an http or https URL")
		}
	}
	// Refuse early what the applier would refuse, before any content is
	// written (the applier decides again, in its transaction).
	w, err := s.db.GetWebhook(r.site, id)
	if err != nil {
		return err
	}
	if w.Expired(r.now) {
		return badRequest("webhook is expired")
	}
	if !w.Enabled {
		return errStatus(http.StatusTooManyRequests, "webhook is disabled")
	}
	doc := storage.NewDocument{Document: storage.Document{DocumentID: r.newID(), ResourceType: storage.ResourceDocument}}
	if private {
		if err := s.requireDocPath(r, "webhooks/"+id, storage.FolderWrite); err != nil {
			return err
		}
	}
	ct := strings.TrimSpace(strings.Clone(string(r.Request().Header.ContentType())))
	if ct == "" {
		ct = "application/json"
	}
	doc.Document.ContentType = ct
	m, tail, shas, err := s.writeBody(r, int64(s.deps.MaxBodyBytes))
	if err != nil {
		return err
	}
	defer s.uploads.done(shas)
	doc.Content, doc.Chunks = &m, tail
	res, err := s.apply(r, storage.OpAddWebhookDocument, storage.AddWebhookDocument{WebhookID: id, IdempotencyKey: idem, Doc: doc})
	if err != nil {
		s.sweep(shas)
		return err
	}
	out, _ := res.Value.(*storage.WebhookDocumentResult)
	if out == nil {
		return errors.New("webhook: the applier returned no document")
	}
	if redirect != "" {
		r.Set(fiber.HeaderLocation, redirect)
		return r.SendStatus(http.StatusMovedPermanently)
	}
	body := map[string]any{"documentId": out.DocumentID}
	if r.site != auth.DefaultSite {
		body["siteId"] = r.site
	}
	return r.JSON(body)
}
