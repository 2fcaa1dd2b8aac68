package intake

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
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// Webhooks (SERVICE-SPEC.md §2.9, §4.4; API.md "Webhooks"): management
// routes for site governors, and the two intake routes that turn a posted
// payload into a document.

// webhookIn is FormKiQ's AddWebhookRequest, plus Quire's actions.
type webhookIn struct {
	Name    *string              `json:"name"`
	TTL     documents.FlexString `json:"ttl"`
	Enabled flexBool             `json:"enabled"`
	Tags    []documents.TagIn    `json:"tags"`
	Actions []documents.ActionIn `json:"actions"`
}

// readWebhook validates a webhook body into the command's fields; create
// requires a name.
func (s *Handlers) readWebhook(r *api.Request, create bool) (storage.PutWebhook, error) {
	var in webhookIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
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
	if in.Enabled.Set {
		switch strings.ToLower(in.Enabled.V) {
		case "true":
			p.Enabled = ptr(true)
		case "false":
			p.Enabled = ptr(false)
		default:
			add("enabled", "invalid 'enabled': \"true\" or \"false\"")
		}
	}
	if in.TTL.Set {
		n, err := strconv.ParseInt(in.TTL.V, 10, 64)
		if err != nil || n < 1 || n > storage.MaxWebhookTTL {
			add("ttl", fmt.Sprintf("'ttl' must be between 1 and %d seconds", storage.MaxWebhookTTL))
		}
		p.TTL = &n
	}
	if in.Tags != nil {
		tags, terrs := documents.ConvertTags(in.Tags, "tags")
		errs = append(errs, terrs...)
		p.Tags = &tags
	}
	if in.Actions != nil {
		acts, aerrs := s.Documents.ConvertActions(r, in.Actions)
		errs = append(errs, aerrs...)
		s.StampActionRights(r, acts)
		p.Actions = &acts
	}
	return p, api.CheckErrors(errs)
}

func ptr[T any](v T) *T { return &v }

// flexBool accepts FormKiQ's "true"/"false" strings and JSON booleans.
type flexBool struct{ documents.FlexString }

func (f *flexBool) UnmarshalJSON(b []byte) error {
	if s := string(b); s == "true" || s == "false" {
		f.Set, f.V = true, s
		return nil
	}
	return f.FlexString.UnmarshalJSON(b)
}

// webhookURL is where a webhook takes payloads.
func (s *Handlers) webhookURL(base, site, id string) string {
	u := strings.TrimSuffix(base, "/") + "/public/webhooks/" + url.PathEscape(id)
	if site != auth.DefaultSite {
		u += "?siteId=" + url.QueryEscape(site)
	}
	return u
}

func (s *Handlers) webhookJSON(base, site string, w *storage.Webhook) map[string]any {
	m := map[string]any{
		"siteId":       site,
		"webhookId":    w.WebhookID,
		"name":         w.Name,
		"url":          s.webhookURL(base, site, w.WebhookID),
		"insertedDate": api.FormatDate(w.InsertedDate),
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
			"userId": tg.UserID, "insertedDate": api.FormatDate(tg.InsertedDate)}
		if len(tg.Values) > 0 {
			m["values"] = tg.Values
		} else {
			m["value"] = tg.Value
		}
		out = append(out, m)
	}
	return out
}

// HandleAddWebhook serves POST /webhooks.
func (s *Handlers) HandleAddWebhook(r *api.Request) error {
	p, err := s.readWebhook(r, true)
	if err != nil {
		return err
	}
	p.WebhookID, p.Create = r.NewID(), true
	if _, err := s.Apply(r, storage.OpPutWebhook, p); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"webhookId": p.WebhookID, "siteId": r.Site})
}

// HandleGetWebhooks serves GET /webhooks.
func (s *Handlers) HandleGetWebhooks(r *api.Request) error {
	return api.KeyPage(r, "wh", "webhooks", func(after string, limit int) ([]storage.Webhook, string, error) {
		return s.DB.Webhooks(r.Site, after, limit)
	}, func(w *storage.Webhook) map[string]any { return s.webhookJSON(s.LinkBase(r.Ctx), r.Site, w) })
}

// HandleGetWebhook serves GET /webhooks/{webhookId}.
func (s *Handlers) HandleGetWebhook(r *api.Request) error {
	w, err := s.DB.GetWebhook(r.Site, api.PathParam(r, "webhookId"))
	if err != nil {
		return err
	}
	return r.JSON(s.webhookJSON(s.LinkBase(r.Ctx), r.Site, w))
}

// HandleUpdateWebhook serves PATCH /webhooks/{webhookId}.
func (s *Handlers) HandleUpdateWebhook(r *api.Request) error {
	p, err := s.readWebhook(r, false)
	if err != nil {
		return err
	}
	p.WebhookID = api.PathParam(r, "webhookId")
	if _, err := s.Apply(r, storage.OpPutWebhook, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object updated", p.WebhookID)})
}

// HandleDeleteWebhook serves DELETE /webhooks/{webhookId}.
func (s *Handlers) HandleDeleteWebhook(r *api.Request) error {
	id := api.PathParam(r, "webhookId")
	if _, err := s.Apply(r, storage.OpDeleteWebhook, storage.DeleteWebhook{WebhookID: id}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object deleted", id)})
}

// HandleGetWebhookTags serves GET /webhooks/{webhookId}/tags. A webhook
// holds at most storage.MaxTagsPerRequest tags: one page.
func (s *Handlers) HandleGetWebhookTags(r *api.Request) error {
	w, err := s.DB.GetWebhook(r.Site, api.PathParam(r, "webhookId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"tags": webhookTagsJSON(w)})
}

// HandleAddWebhookTag serves POST /webhooks/{webhookId}/tags.
func (s *Handlers) HandleAddWebhookTag(r *api.Request) error {
	var in documents.TagIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	tags, errs := documents.ConvertTags([]documents.TagIn{in}, "tag")
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	id := api.PathParam(r, "webhookId")
	if _, err := s.Apply(r, storage.OpAddWebhookTag, storage.AddWebhookTag{WebhookID: id, Tag: tags[0]}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("Created Tag '%s'.", tags[0].Key)})
}

// errPublicWebhooksOff answers the public intake route on a server that
// has not opened it (config webhooks.public).
var errPublicWebhooksOff = api.ErrStatus(http.StatusNotFound, "public webhooks are not enabled on this server (webhooks.public)")

// HandlePublicWebhook serves POST /public/webhooks/{webhooks+}: no token;
// the site is ?siteId= (default "default").
func (s *Handlers) HandlePublicWebhook(c *fiber.Ctx) error {
	if !s.Deps.PublicWebhooks {
		return errPublicWebhooksOff
	}
	if err := api.CheckURLText(c); err != nil {
		return err
	}
	site := strings.Clone(c.Query("siteId"))
	if site == "" {
		site = auth.DefaultSite
	}
	if !storage.CheckSiteID(site) {
		return api.ErrStatus(http.StatusBadRequest, "invalid siteId")
	}
	p := &auth.Principal{Username: "public", Sites: map[string][]auth.Permission{}}
	return s.takeWebhook(&api.Request{Ctx: c, Principal: p, Site: site, Now: s.Now().UTC()}, false)
}

// HandlePrivateWebhook serves POST /private/webhooks/{webhooks+}.
func (s *Handlers) HandlePrivateWebhook(r *api.Request) error { return s.takeWebhook(r, true) }

// takeWebhook stores the request body as sent (its content type kept) as
// a document of the webhook named by the path's first segment.
func (s *Handlers) takeWebhook(r *api.Request, private bool) error {
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
			return api.Invalid("Idempotency-Key", fmt.Sprintf("'Idempotency-Key' must be at most %d bytes", storage.MaxIdempotencyKeyBytes))
		}
		sum := sha256.Sum256([]byte(k))
		idem = hex.EncodeToString(sum[:])
	}
	redirect := strings.Clone(r.Query("redirect_uri"))
	if redirect != "" {
		if u, err := url.Parse(redirect); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return api.Invalid("redirect_uri", "invalid 'redirect_uri': an http or https URL")
		}
	}
	// Refuse early what the applier would refuse, before any content is
	// written (the applier decides again, in its transaction).
	w, err := s.DB.GetWebhook(r.Site, id)
	if err != nil {
		return err
	}
	if w.Expired(r.Now) {
		return api.BadRequest("webhook is expired")
	}
	if !w.Enabled {
		return api.ErrStatus(http.StatusTooManyRequests, "webhook is disabled")
	}
	// A webhook names no actions: the site's default processing applies
	// (issue 46), added by the applier.
	doc := storage.NewDocument{Document: storage.Document{DocumentID: r.NewID(), ResourceType: storage.ResourceDocument}, DefaultActions: true}
	if private {
		if err := s.RequireDocPath(r, "webhooks/"+id, storage.FolderWrite); err != nil {
			return err
		}
	}
	ct := strings.TrimSpace(strings.Clone(string(r.Request().Header.ContentType())))
	if ct == "" {
		ct = "application/json"
	}
	doc.Document.ContentType = ct
	m, tail, shas, err := s.Content.WriteBody(r, int64(s.Deps.MaxBodyBytes))
	if err != nil {
		return err
	}
	defer s.Content.Uploads.Done(shas)
	doc.Content, doc.Chunks = &m, tail
	res, err := s.Apply(r, storage.OpAddWebhookDocument, storage.AddWebhookDocument{WebhookID: id, IdempotencyKey: idem, Doc: doc})
	if err != nil {
		s.Content.Sweep(shas)
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
	if r.Site != auth.DefaultSite {
		body["siteId"] = r.Site
	}
	return r.JSON(body)
}
