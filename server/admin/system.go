package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"quire/server/internal/api"
	"quire/storage"
)

// HandleGetSystemConfig serves GET /system/configuration: FormKiQ's webui
// settings plus the global branding. Every signed-in user may read it (a
// web client needs both before it shows anything).
func (s *Handlers) HandleGetSystemConfig(r *api.Request) error {
	c, err := s.DB.SystemConfig()
	if err != nil {
		return err
	}
	// Both flags always show (the spec requires ssoLoginRedirectEnabled).
	webui := map[string]any{"ssoAutomaticSignIn": false, "ssoLoginRedirectEnabled": false}
	if w := c.WebUI; w != nil {
		if w.SsoAutomaticSignIn != nil {
			webui["ssoAutomaticSignIn"] = *w.SsoAutomaticSignIn
		}
		if w.SsoLoginRedirectEnabled != nil {
			webui["ssoLoginRedirectEnabled"] = *w.SsoLoginRedirectEnabled
		}
	}
	// Quire's: the console's idle timeout (auth.console_idle_timeout).
	webui["idleTimeoutSeconds"] = int(s.Deps.Auth.IdleTimeout() / time.Second)
	out := map[string]any{"webui": webui}
	if c.Branding != nil {
		// The logo is its own file (branding.logoUrl, GET /branding/logo).
		out["branding"] = api.BrandingJSON("", c.Branding)
	}
	return api.CompressedJSON(r.Ctx, out)
}

// HandleUpdateSystemConfig serves PATCH /system/configuration (admin route):
// the sections given replace the stored ones.
func (s *Handlers) HandleUpdateSystemConfig(r *api.Request) error {
	var raw map[string]json.RawMessage
	if err := r.ReadBody(&raw, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var in storage.SystemConfig
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return api.Invalid(te.Field, "invalid '"+te.Field+"' type")
		}
		return api.ErrInvalidBody
	}
	cur, err := s.DB.SystemConfig()
	if err != nil {
		return err
	}
	next := *cur
	var errs []storage.ValidationItem
	if w, ok := raw["webui"]; ok {
		next.WebUI = in.WebUI
		var keys map[string]json.RawMessage
		if json.Unmarshal(w, &keys) == nil {
			if _, set := keys["idleTimeoutSeconds"]; set {
				errs = append(errs, storage.ValidationItem{Key: "webui.idleTimeoutSeconds", Msg: "set by the server setting auth.console_idle_timeout"})
			}
			if _, on := s.Deps.Auth.OIDC(); !on && in.WebUI != nil && in.WebUI.SsoAutomaticSignIn != nil && *in.WebUI.SsoAutomaticSignIn {
				errs = append(errs, storage.ValidationItem{Key: "webui.ssoAutomaticSignIn",
					Msg: "needs an identity provider: set auth.oidc_authorization_url, auth.oidc_token_url and auth.oidc_client_id"})
			}
		}
	}
	if _, ok := raw["branding"]; ok {
		next.Branding = in.Branding
		api.KeepLogo("", next.Branding, cur.Branding)
		errs = append(errs, validateBranding(in.Branding)...)
	}
	if len(raw) == 0 {
		errs = append(errs, storage.ValidationItem{Key: "webui", Msg: "'webui' or 'branding' is required"})
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	if _, err := s.Apply(r, storage.OpSetSystemConfig, next); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Config saved"})
}

var hexColor = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

// maxLogoBytes bounds an inline (data: URL) logo.
const maxLogoBytes = 256 << 10

// validateBranding checks a branding section (system or site).
func validateBranding(b *storage.Branding) []storage.ValidationItem {
	if b == nil {
		return nil
	}
	var errs []storage.ValidationItem
	bad := func(k, msg string) { errs = append(errs, storage.ValidationItem{Key: "branding." + k, Msg: msg}) }
	if len(b.Title) > 100 {
		bad("title", "'title' must be at most 100 characters")
	}
	for k, v := range map[string]string{"primaryColor": b.PrimaryColor, "secondaryColor": b.SecondaryColor} {
		if v != "" && !hexColor.MatchString(v) {
			bad(k, "invalid '"+k+"', use #RRGGBB")
		}
	}
	if b.Logo != "" {
		switch {
		case strings.HasPrefix(b.Logo, "data:image/"):
			if len(b.Logo) > maxLogoBytes {
				bad("logo", "'logo' must be at most 256 KB")
			}
		default:
			if u, err := url.Parse(b.Logo); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				bad("logo", "invalid 'logo', use an http(s) URL or a data:image/ URL")
			}
		}
	}
	if b.SupportEmail != "" && !api.ValidEmail(b.SupportEmail) {
		bad("supportEmail", "invalid 'supportEmail'")
	}
	return errs
}

// validateDocumentConfig checks a site configuration's document section:
// content type lists and retention and disposition.
func validateDocumentConfig(raw json.RawMessage) []storage.ValidationItem {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var d struct {
		ContentTypes *struct {
			Allowlist []string `json:"allowlist"`
			Denylist  []string `json:"denylist"`
		} `json:"contentTypes"`
		RetentionAndDisposition *struct {
			DispositionAction         *string `json:"dispositionAction"`
			SoftDeleteRetentionInDays *int    `json:"softDeleteRetentionInDays"`
		} `json:"retentionAndDisposition"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return []storage.ValidationItem{{Key: "document", Msg: "invalid 'document'"}}
	}
	var errs []storage.ValidationItem
	if ct := d.ContentTypes; ct != nil {
		for _, l := range []struct {
			name    string
			entries []string
		}{{"allowlist", ct.Allowlist}, {"denylist", ct.Denylist}} {
			key := "document.contentTypes." + l.name
			if len(l.entries) > storage.MaxContentTypeEntries {
				errs = append(errs, storage.ValidationItem{Key: key, Msg: fmt.Sprintf("'%s' holds at most %d content types", l.name, storage.MaxContentTypeEntries)})
				continue
			}
			for _, e := range l.entries {
				if !storage.CheckListEntry(e) {
					errs = append(errs, storage.ValidationItem{Key: key, Msg: fmt.Sprintf("invalid content type '%s' in '%s': use type/subtype or type/*, lower case, without parameters", e, l.name)})
					break
				}
			}
		}
	}
	if rd := d.RetentionAndDisposition; rd != nil {
		if a := rd.DispositionAction; a != nil && *a != "SOFT_DELETE" && *a != "DELETE" {
			errs = append(errs, storage.ValidationItem{Key: "document.retentionAndDisposition.dispositionAction", Msg: "invalid 'dispositionAction', use SOFT_DELETE or DELETE"})
		}
		if n := rd.SoftDeleteRetentionInDays; n != nil && *n < -1 {
			errs = append(errs, storage.ValidationItem{Key: "document.retentionAndDisposition.softDeleteRetentionInDays", Msg: "'softDeleteRetentionInDays' must be -1 (keep) or more"})
		}
	}
	return errs
}
