package storage

import (
	"encoding/json"
	"errors"
)

// SiteConfig is a site's configuration (FormKiQ's site configuration plus
// Quire's llm endpoint). Sections Quire does not use are kept as given.
type SiteConfig struct {
	ChatGptAPIKey         string              `json:"chatGptApiKey,omitempty"`
	MaxContentLengthBytes string              `json:"maxContentLengthBytes,omitempty"`
	MaxDocuments          string              `json:"maxDocuments,omitempty"`
	MaxWebhooks           string              `json:"maxWebhooks,omitempty"`
	NotificationEmail     string              `json:"notificationEmail,omitempty"`
	Notification          *NotificationConfig `json:"notification,omitempty"`
	Document              json.RawMessage     `json:"document,omitempty"`
	Ocr                   json.RawMessage     `json:"ocr,omitempty"`
	Google                json.RawMessage     `json:"google,omitempty"`
	Docusign              json.RawMessage     `json:"docusign,omitempty"`
	LLM                   *LLMConfig          `json:"llm,omitempty"`
	// Branding is the site's own branding; it neither inherits from nor
	// changes the system's.
	Branding *Branding `json:"branding,omitempty"`
}

// Branding is how a web client presents the system or a site (Quire's
// names; FormKiQ 1.19.1 has branding but no published fields).
type Branding struct {
	Title          string `json:"title,omitempty"`
	Logo           string `json:"logo,omitempty"` // https URL or data:image/... URL
	PrimaryColor   string `json:"primaryColor,omitempty"`
	SecondaryColor string `json:"secondaryColor,omitempty"`
	SupportEmail   string `json:"supportEmail,omitempty"`
}

// SystemConfig is the configuration of the whole server.
type SystemConfig struct {
	WebUI    *WebUIConfig `json:"webui,omitempty"`
	Branding *Branding    `json:"branding,omitempty"`
}

// WebUIConfig is FormKiQ's SystemConfigurationWebUi.
type WebUIConfig struct {
	SsoAutomaticSignIn *bool `json:"ssoAutomaticSignIn,omitempty"`
}

// NotificationConfig is FormKiQ 1.19.1's notification configuration. On
// Quire the SMTP credentials are given directly (username, password)
// instead of as an AWS secret.
type NotificationConfig struct {
	Email    string      `json:"email,omitempty"`
	Provider string      `json:"provider,omitempty"`
	SMTP     *SMTPConfig `json:"smtp,omitempty"`
}

// SMTPConfig is a site's mail server.
type SMTPConfig struct {
	Host                 string `json:"host,omitempty"`
	Port                 int    `json:"port,omitempty"`
	ConnectionSecurity   string `json:"connectionSecurity,omitempty"`
	CredentialsSecretArn string `json:"credentialsSecretArn,omitempty"`
	Username             string `json:"username,omitempty"`
	Password             string `json:"password,omitempty"`
}

// LLMConfig is a site's OpenAI-compatible chat endpoint (Quire).
type LLMConfig struct {
	URL     string `json:"url,omitempty"`
	APIKey  string `json:"apiKey,omitempty"`
	ModelID string `json:"modelId,omitempty"`
}

// FromEmail is the sender address of the site's notifications.
func (c *SiteConfig) FromEmail() string {
	if c.Notification != nil && c.Notification.Email != "" {
		return c.Notification.Email
	}
	return c.NotificationEmail
}

func applySetSystemConfig(t *tx, c *Command) (any, error) {
	p, err := decode[SystemConfig](c)
	if err != nil {
		return nil, err
	}
	return nil, t.setJSON(systemConfigKey, p)
}

// SystemConfig returns the system configuration (empty when none was
// saved).
func (d *DB) SystemConfig() (*SystemConfig, error) {
	var c SystemConfig
	err := d.view(func(t *tx) error { return t.getJSON(systemConfigKey, &c) })
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return &c, nil
}

func applySetSiteConfig(t *tx, c *Command) (any, error) {
	p, err := decode[SiteConfig](c)
	if err != nil {
		return nil, err
	}
	cur, err := siteConfigIn(t, c.Site)
	if err != nil {
		return nil, err
	}
	// The document count is kept only while a limit is set: a count from
	// an earlier period with a limit would be stale.
	if cur.DocumentLimit() == 0 || p.DocumentLimit() == 0 {
		if err := t.del(docCountKey(c.Site)); err != nil {
			return nil, err
		}
	}
	if err := t.setJSON(siteConfigKey(c.Site), p); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// SiteConfig returns a site's configuration (empty when none was saved).
func (d *DB) SiteConfig(site string) (*SiteConfig, error) {
	var c SiteConfig
	err := d.view(func(t *tx) error { return t.getJSON(siteConfigKey(site), &c) })
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return &c, nil
}
