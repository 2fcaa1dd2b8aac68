package storage

import (
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/dgraph-io/badger/v4"
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
	// PublicDocuments opens POST /public/documents for the site (Quire's
	// setting; FormKiQ enables it at installation).
	PublicDocuments *PublicDocumentsConfig `json:"publicDocuments,omitempty"`
	// Processing is what the site does with documents by itself: the
	// languages its scans are read in and its text analysed with, and the
	// actions a new document gets when its request names none (Quire's
	// section; issue 46).
	Processing *ProcessingConfig `json:"processing,omitempty"`
}

// ProcessingConfig is a site's document processing (Quire's setting).
type ProcessingConfig struct {
	// Languages are the tesseract languages OCR reads the site's scans in
	// ("eng", "deu", "fra", ...), most used first; the first also chooses
	// the analyzer of the site's fulltext search. Empty: those of
	// DefaultOCRLanguages tesseract has (the search analyzer stays the
	// default one, which folds German letters and stems English).
	Languages []string `json:"languages,omitempty"`
	// DefaultActions are the action types every new document and new
	// content version gets when its request names no actions. Nil: the
	// default (DefaultActionTypes); empty: none.
	DefaultActions *[]string `json:"defaultActions,omitempty"`
}

// DefaultActionTypes are the actions a new document gets when neither its
// request nor its site's processing.defaultActions names any: OCR (which
// skips what is not an image or a PDF, and reads a PDF's own text layer
// where every page has one) and FULLTEXT (issue 46).
var DefaultActionTypes = []string{"OCR", "FULLTEXT"}

// DefaultOCRLanguages are the languages a site's scans are read in when
// the site chose none (processing.languages unset), English first: the
// languages Quire's console speaks (console/i18n), so that an office
// that works in German or French finds its letters by their words
// (Straße, Grüße, réparation) without a setting. Of them, OCR uses those
// tesseract has (pipeline.SiteOCRLanguages): a server with only
// tesseract-ocr-eng reads English. Issue 46 measured the cost, in CPU per
// A4 page against English alone: about the same on an English page, a
// quarter more on a German one, which English alone misreads.
var DefaultOCRLanguages = []string{"eng", "deu", "fra"}

// OCRLanguages returns the tesseract languages of the site's scans and
// whether the site chose them; when it did not, DefaultOCRLanguages (of
// which the pipeline reads in those tesseract has).
func (c *SiteConfig) OCRLanguages() ([]string, bool) {
	if c == nil || c.Processing == nil || len(c.Processing.Languages) == 0 {
		return slices.Clone(DefaultOCRLanguages), false
	}
	return c.Processing.Languages, true
}

// SearchLanguage returns the site's main language (the first of
// processing.languages), "" when none is set.
func (c *SiteConfig) SearchLanguage() string {
	if c == nil || c.Processing == nil || len(c.Processing.Languages) == 0 {
		return ""
	}
	return c.Processing.Languages[0]
}

// DefaultActions returns the action types a new document of the site gets
// when its request names none.
func (c *SiteConfig) DefaultActions() []string {
	if c == nil || c.Processing == nil || c.Processing.DefaultActions == nil {
		return DefaultActionTypes
	}
	return *c.Processing.DefaultActions
}

// PublicDocumentsConfig is a site's anonymous document submission: off
// unless Enabled; at most PerClientPerMinute documents a minute from one
// client address (0: 10).
type PublicDocumentsConfig struct {
	Enabled            bool `json:"enabled"`
	PerClientPerMinute int  `json:"perClientPerMinute,omitempty"`
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

// WebUIConfig is FormKiQ's SystemConfigurationWebUi: settings a web
// client reads (the server stores them and acts on neither).
type WebUIConfig struct {
	SsoAutomaticSignIn      *bool `json:"ssoAutomaticSignIn,omitempty"`
	SsoLoginRedirectEnabled *bool `json:"ssoLoginRedirectEnabled,omitempty"`
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

// ConfiguredSites lists the sites that have a stored configuration.
func (d *DB) ConfiguredSites() ([]string, error) {
	var out []string
	err := d.view(func(t *tx) error {
		for _, k := range t.keys([]byte(pfxSiteConfig)) {
			out = append(out, siteOfKey(string(k[len(pfxSiteConfig):])))
		}
		return nil
	})
	return out, err
}

// SiteConfig returns a site's configuration (empty when none was saved).
//
// It is answered from a cache of the stored JSON: every POST /documents
// asks for it, and under a write load a Badger read transaction waits for
// the commits being synced (the oracle's read watermark), which made this
// one read a fifth of a create's latency (storage/DESIGN.md, "Sustained
// writes"). Apply clears the cache when a SetSiteConfig commits, before it
// returns, so a reader after that sees the new configuration.
func (d *DB) SiteConfig(site string) (*SiteConfig, error) {
	raw, ok, gen := d.siteCfg.get(site)
	if !ok {
		err := d.view(func(t *tx) error {
			item, err := t.txn.Get(siteConfigKey(site))
			if errors.Is(err, badger.ErrKeyNotFound) {
				raw = nil
				return nil
			}
			if err != nil {
				return err
			}
			raw, err = item.ValueCopy(nil)
			return err
		})
		if err != nil {
			return nil, err
		}
		d.siteCfg.put(site, raw, gen)
	}
	var c SiteConfig
	if raw != nil {
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// siteConfigCache holds the stored JSON of site configurations (nil: none
// saved), at most maxCachedSiteConfigs of them. A read that started before
// a clear does not fill the cache.
type siteConfigCache struct {
	mu  sync.Mutex
	gen uint64
	m   map[string][]byte
}

// get returns the cached JSON of site, whether it was cached, and the
// generation a put of a fresh read must quote.
func (c *siteConfigCache) get(site string) ([]byte, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	raw, ok := c.m[site]
	return raw, ok, c.gen
}

// put caches raw, read from storage after get returned gen.
func (c *siteConfigCache) put(site string, raw []byte, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.m == nil || len(c.m) >= maxCachedSiteConfigs {
		// A caller naming many site ids (most of them unknown) starts
		// the cache again instead of growing it without bound.
		c.m = map[string][]byte{}
	}
	c.m[site] = raw
}

// maxCachedSiteConfigs bounds the site configuration cache: an office has
// a handful of sites, but a site id in a request is the caller's choice.
const maxCachedSiteConfigs = 1024

// clear empties the cache; reads under way do not refill it.
func (c *siteConfigCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.m = nil
}
