package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"quire/pipeline"
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetSiteConfig serves GET /sites/{siteId}/configuration. Secrets
// (API keys, SMTP password) are masked.
func (s *Handlers) HandleGetSiteConfig(r *api.Request) error {
	c, err := s.DB.SiteConfig(r.Site)
	if err != nil {
		return err
	}
	out := *c
	out.ChatGptAPIKey = mask(c.ChatGptAPIKey)
	if c.LLM != nil {
		l := *c.LLM
		l.APIKey = mask(l.APIKey)
		out.LLM = &l
	}
	if c.Notification != nil && c.Notification.SMTP != nil {
		n := *c.Notification
		smtp := *n.SMTP
		smtp.Password = mask(smtp.Password)
		n.SMTP = &smtp
		out.Notification = &n
	}
	if c.Branding == nil {
		return api.CompressedJSON(r.Ctx, out)
	}
	// The logo as its own file (api.BrandingJSON): logoUrl, not its bytes.
	out.Branding = nil
	b, err := api.MarshalJSON(out)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	m["branding"] = api.BrandingJSON(r.Site, c.Branding)
	return api.CompressedJSON(r.Ctx, m)
}

// mask shows the last four characters of a secret.
func mask(s string) string {
	if s == "" {
		return ""
	}
	if len(s) <= 8 {
		return "****"
	}
	return "****" + s[len(s)-4:]
}

// HandleUpdateSiteConfig serves PATCH /sites/{siteId}/configuration: the
// sections given replace the stored ones. A secret sent back masked (as
// GET shows it) keeps its stored value only while the destination it is
// sent to stays the same (the SMTP password: host and port; the LLM key:
// url); with a new destination the PATCH must give the secret again (400
// otherwise), so that whoever may change a site's configuration cannot
// redirect a secret someone else entered to a server of their own.
// Destinations are checked against the outbound policy.
func (s *Handlers) HandleUpdateSiteConfig(r *api.Request) error {
	var raw map[string]json.RawMessage
	if err := r.ReadBody(&raw, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var in storage.SiteConfig
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &in); err != nil {
		return api.Invalid("", "invalid configuration: "+err.Error())
	}
	cur, err := s.DB.SiteConfig(r.Site)
	if err != nil {
		return err
	}
	next := *cur
	set := func(k string, apply func()) {
		if _, ok := raw[k]; ok {
			apply()
		}
	}
	masked := func(given string) bool { return strings.HasPrefix(given, "****") }
	keep := func(given, stored string) string {
		if masked(given) {
			return stored
		}
		return given
	}
	var errs []storage.ValidationItem
	// keepFor keeps a masked secret when its destination did not move.
	keepFor := func(given, stored string, sameDest bool, key, msg string) string {
		if !masked(given) {
			return given
		}
		if !sameDest {
			errs = append(errs, storage.ValidationItem{Key: key, Msg: msg})
		}
		return stored
	}
	set("chatGptApiKey", func() { next.ChatGptAPIKey = keep(in.ChatGptAPIKey, cur.ChatGptAPIKey) })
	limit := func(key string, dst *string, v string) {
		set(key, func() {
			if _, ok := storage.ParseSiteLimit(v); !ok {
				errs = append(errs, storage.ValidationItem{Key: key, Msg: fmt.Sprintf("invalid '%s': a positive number of %s, or \"\" for no limit", key, limitUnit[key])})
			}
			*dst = strings.TrimSpace(v)
		})
	}
	limit("maxContentLengthBytes", &next.MaxContentLengthBytes, in.MaxContentLengthBytes)
	limit("maxDocuments", &next.MaxDocuments, in.MaxDocuments)
	limit("maxWebhooks", &next.MaxWebhooks, in.MaxWebhooks)
	set("notificationEmail", func() { next.NotificationEmail = in.NotificationEmail })
	errs = append(errs, unsupportedSiteConfig(raw)...)
	errs = append(errs, unknownSiteConfig(raw)...)
	set("document", func() {
		next.Document = in.Document
		errs = append(errs, validateDocumentConfig(in.Document)...)
	})
	set("publicDocuments", func() {
		next.PublicDocuments = in.PublicDocuments
		if pd := in.PublicDocuments; pd != nil && (pd.PerClientPerMinute < 0 || pd.PerClientPerMinute > documents.MaxPublicPerMinute) {
			errs = append(errs, storage.ValidationItem{Key: "publicDocuments.perClientPerMinute", Msg: fmt.Sprintf("'perClientPerMinute' must be between 1 and %d", documents.MaxPublicPerMinute)})
		}
	})
	set("branding", func() {
		next.Branding = in.Branding
		api.KeepLogo(r.Site, next.Branding, cur.Branding)
		errs = append(errs, validateBranding(in.Branding)...)
	})
	// Only empty values get here (unsupportedSiteConfig refuses others):
	// they clear what an older version stored.
	set("ocr", func() { next.Ocr = nilIfEmpty(in.Ocr) })
	set("google", func() { next.Google = nilIfEmpty(in.Google) })
	set("docusign", func() { next.Docusign = nilIfEmpty(in.Docusign) })
	set("notification", func() {
		next.Notification = in.Notification
		n := in.Notification
		if n == nil {
			return
		}
		if n.Email != "" && !api.ValidEmail(n.Email) {
			errs = append(errs, storage.ValidationItem{Key: "notification.email", Msg: "invalid 'email'"})
		}
		switch n.Provider {
		case "", "SMTP", "SES":
		default:
			errs = append(errs, storage.ValidationItem{Key: "notification.provider", Msg: "invalid 'provider'"})
		}
		if n.SMTP != nil {
			if n.SMTP.Host == "" {
				errs = append(errs, storage.ValidationItem{Key: "notification.smtp.host", Msg: "'host' is required"})
			} else if s.Dest != nil {
				if err := s.Dest.CheckSiteSMTPHost(n.SMTP.Host); err != nil {
					errs = append(errs, storage.ValidationItem{Key: "notification.smtp.host", Msg: err.Error()})
				}
			}
			if n.SMTP.Port < 1 || n.SMTP.Port > 65535 {
				errs = append(errs, storage.ValidationItem{Key: "notification.smtp.port", Msg: "invalid 'port'"})
			}
			switch n.SMTP.ConnectionSecurity {
			case "", "STARTTLS", "IMPLICIT_TLS", "NONE":
			default:
				errs = append(errs, storage.ValidationItem{Key: "notification.smtp.connectionSecurity", Msg: "invalid 'connectionSecurity'"})
			}
			var old storage.SMTPConfig
			if cur.Notification != nil && cur.Notification.SMTP != nil {
				old = *cur.Notification.SMTP
			}
			n.SMTP.Password = keepFor(n.SMTP.Password, old.Password, old.Host == n.SMTP.Host && old.Port == n.SMTP.Port,
				"notification.smtp.password", "the masked 'password' is kept only while 'host' and 'port' stay the same: give the password again")
		}
	})
	set("processing", func() {
		next.Processing = in.Processing
		if s.Deps.Pipeline == nil {
			if in.Processing != nil {
				errs = append(errs, storage.ValidationItem{Key: "processing", Msg: "this server runs no actions: 'processing' cannot take effect"})
			}
			return
		}
		errs = append(errs, s.Deps.Pipeline.CheckProcessing(r.UserContext(), in.Processing)...)
	})
	set("llm", func() {
		next.LLM = in.LLM
		if in.LLM == nil {
			return
		}
		var old storage.LLMConfig
		if cur.LLM != nil {
			old = *cur.LLM
		}
		next.LLM.APIKey = keepFor(in.LLM.APIKey, old.APIKey, old.URL == in.LLM.URL,
			"llm.apiKey", "the masked 'apiKey' is kept only while 'url' stays the same: give the key again")
		if in.LLM.URL != "" && !strings.HasPrefix(in.LLM.URL, "http://") && !strings.HasPrefix(in.LLM.URL, "https://") {
			errs = append(errs, storage.ValidationItem{Key: "llm.url", Msg: "invalid 'url'"})
		} else if in.LLM.URL != "" && s.Dest != nil {
			if err := s.Dest.CheckSiteLLMURL(in.LLM.URL); err != nil {
				errs = append(errs, storage.ValidationItem{Key: "llm.url", Msg: err.Error()})
			}
		}
	})
	// chatGptApiKey is the key of the site's LLM endpoint when llm names
	// none: it may follow a new url only when given again.
	if _, ok := raw["chatGptApiKey"]; (!ok || masked(in.ChatGptAPIKey)) &&
		next.ChatGptAPIKey != "" && siteLLMURL(cur) != siteLLMURL(&next) && (next.LLM == nil || next.LLM.APIKey == "") {
		errs = append(errs, storage.ValidationItem{Key: "chatGptApiKey", Msg: "'chatGptApiKey' is sent to the site's LLM endpoint: give it again, or an 'llm.apiKey', when 'llm.url' changes"})
	}
	if next.NotificationEmail != "" && !api.ValidEmail(next.NotificationEmail) {
		errs = append(errs, storage.ValidationItem{Key: "notificationEmail", Msg: "invalid 'notificationEmail'"})
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	if _, err := s.Apply(r, storage.OpSetSiteConfig, next); err != nil {
		return err
	}
	if _, ok := raw["document"]; ok {
		s.SweepRetention()
	}
	return r.JSON(api.MessageBody{Message: "Config saved"})
}

// siteLLMURL is the LLM endpoint a site chose ("": the server's).
func siteLLMURL(c *storage.SiteConfig) string {
	if c.LLM == nil {
		return ""
	}
	return c.LLM.URL
}

// readTestMailTo reads a test mail's body, {"to": an e-mail address}.
func (s *Handlers) readTestMailTo(r *api.Request) (string, error) {
	var in struct {
		To string `json:"to"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return "", err
	}
	if in.To == "" {
		return "", api.Invalid("to", "'to' is required")
	}
	if !api.ValidEmail(in.To) {
		return "", api.Invalid("to", "invalid 'to'")
	}
	return in.To, nil
}

// HandleNotificationTest serves POST /sites/{siteId}/configuration/notification/test:
// it sends a test e-mail with the site's saved settings.
func (s *Handlers) HandleNotificationTest(r *api.Request) error {
	to, err := s.readTestMailTo(r)
	if err != nil {
		return err
	}
	if s.Deps.Pipeline == nil {
		return api.BadRequest("notifications are not available")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Deps.Pipeline.SendTestMail(ctx, r.Site, to); err != nil {
		return api.Invalid("notification", "test notification not sent: "+err.Error())
	}
	return r.Status(http.StatusAccepted).JSON(api.MessageBody{Message: "Test notification sent"})
}

// HandleServerMailTest serves POST /system/mail/test (Admins; Quire): a
// test mail through the server's own mail settings, the only path of
// reset codes and temporary passwords (never a site's notification
// settings, which a governor sets).
func (s *Handlers) HandleServerMailTest(r *api.Request) error {
	to, err := s.readTestMailTo(r)
	if err != nil {
		return err
	}
	if s.Deps.Pipeline == nil || s.Deps.Pipeline.ServerMail() != nil {
		return api.BadRequest("password mail is not available: " + pipeline.ErrNoServerMail.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Deps.Pipeline.SendServerTestMail(ctx, to); err != nil {
		return api.Invalid("smtp", "test mail not sent: "+err.Error())
	}
	return r.Status(http.StatusAccepted).JSON(api.MessageBody{Message: "Test mail sent"})
}

// limitUnit names what each numeric site limit counts, for its message.
var limitUnit = map[string]string{"maxContentLengthBytes": "bytes", "maxDocuments": "documents", "maxWebhooks": "webhooks"}

// siteConfigSections are the top-level keys of a site's configuration:
// the JSON names of storage.SiteConfig's fields, each of which
// HandleUpdateSiteConfig applies (TestSiteConfig_EverySectionTakesEffect).
var siteConfigSections = func() []string {
	var keys []string
	t := reflect.TypeFor[storage.SiteConfig]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}()

// unknownSiteConfig refuses top-level keys that are no section of the
// configuration: accepted and ignored, a misspelt setting would look saved.
func unknownSiteConfig(raw map[string]json.RawMessage) []storage.ValidationItem {
	var errs []storage.ValidationItem
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(siteConfigSections, k) {
			errs = append(errs, storage.ValidationItem{Key: k, Msg: fmt.Sprintf("unknown setting '%s'", k)})
		}
	}
	return errs
}

// unsupportedSiteSettings are FormKiQ site settings Quire has nothing to apply
// to, with the reason given to a client that sets one. Accepting them
// silently would let an operator believe a limit or an integration is in
// force.
var unsupportedSiteSettings = []struct{ key, why string }{
	{"ocr", "OCR limits per site are not supported; the server's OCR settings apply"},
	{"google", "Google integration is not available on this server"},
	{"docusign", "DocuSign integration is not available on this server"},
}

// unsupportedSiteConfig refuses every setting of unsupportedSiteSettings
// given with a value (null, "", {} and [] clear it and are accepted).
func unsupportedSiteConfig(raw map[string]json.RawMessage) []storage.ValidationItem {
	var errs []storage.ValidationItem
	for _, u := range unsupportedSiteSettings {
		top, sub, nested := strings.Cut(u.key, ".")
		v := raw[top]
		if nested {
			var m map[string]json.RawMessage
			if json.Unmarshal(v, &m) != nil {
				continue // the section's own validation reports it
			}
			v = m[sub]
		}
		if emptyJSON(v) || u.key == "ocr" && ocrUnlimited(v) {
			continue
		}
		name := u.key[strings.LastIndexByte(u.key, '.')+1:]
		errs = append(errs, storage.ValidationItem{Key: u.key, Msg: fmt.Sprintf("'%s' is not supported: %s", name, u.why)})
	}
	return errs
}

// ocrUnlimited reports OCR limits that are all -1 (unlimited), which is
// what Quire does.
func ocrUnlimited(v json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return false
	}
	for _, x := range m {
		if strings.TrimSpace(string(x)) != "-1" && !emptyJSON(x) {
			return false
		}
	}
	return true
}

func nilIfEmpty(v json.RawMessage) json.RawMessage {
	if emptyJSON(v) {
		return nil
	}
	return v
}

// emptyJSON reports a missing, null or empty JSON value, or an object of
// only such values ({"allowlist":[]}).
func emptyJSON(v json.RawMessage) bool {
	switch strings.TrimSpace(string(v)) {
	case "", "null", `""`, "{}", "[]":
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return false
	}
	for _, x := range m {
		if !emptyJSON(x) {
			return false
		}
	}
	return true
}
