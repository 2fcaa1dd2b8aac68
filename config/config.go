// Package config holds every setting of a Quire server and loads them from
// one TOML file, QUIRE_* environment variables and command-line flags, in
// that order of precedence (a flag wins over a variable, which wins over
// the file).
//
// The settings table (settings.go) is the single source of the setting
// names, flags, variables, defaults and help: `quire config example`
// prints it as a commented file, so the example and the code cannot drift.
package config

import (
	"time"

	"quire/ratelimit"
)

// Config is the configuration of a Quire server.
type Config struct {
	Listen     string            `toml:"listen"`
	DataDir    string            `toml:"data_dir"`
	PublicURL  string            `toml:"public_url"`
	TLS        TLS               `toml:"tls"`
	Auth       Auth              `toml:"auth"`
	Limits     Limits            `toml:"limits"`
	Storage    Storage           `toml:"storage"`
	Index      Index             `toml:"index"`
	Log        Log               `toml:"log"`
	Pipeline   Pipeline          `toml:"pipeline"`
	Engines    Engines           `toml:"engines"`
	SMTP       SMTP              `toml:"smtp"`
	LLM        LLM               `toml:"llm"`
	Webhooks   Webhooks          `toml:"webhooks"`
	ESignature ESignature        `toml:"esignature"`
	Certify    Certify           `toml:"certify"`
	EventBuses map[string]string `toml:"event_buses"`
	Outbound   Outbound          `toml:"outbound"`
	Metrics    Metrics           `toml:"metrics"`
	Cluster    Cluster           `toml:"cluster"`
	Intake     Intake            `toml:"intake"`
	IntakeSMTP IntakeSMTP        `toml:"intake_smtp"`
	// RateLimit is a limit spec per route class (ratelimit.Parse's
	// format), every class present (Default fills them).
	RateLimit map[string]string `toml:"ratelimit"`
}

// Cluster makes the server a member of a Raft cluster of Quire nodes
// (cluster/DESIGN.md). All empty: a single server.
type Cluster struct {
	NodeID     string `toml:"node_id"`
	RaftListen string `toml:"raft_listen"`
	Bootstrap  bool   `toml:"bootstrap"`
	Join       string `toml:"join"`
	JoinToken  string `toml:"join_token"`
	// VerifyInterval is how often the leader compares a digest of every
	// member's store (cluster/DESIGN.md, "Replicas proven equal"); 0:
	// only on demand (POST /cluster/verify).
	VerifyInterval time.Duration `toml:"verify_interval"`
}

// Enabled reports whether the server runs as a cluster member.
func (c Cluster) Enabled() bool { return c.NodeID != "" }

// TLS configures HTTPS on the listener.
type TLS struct {
	CertFile   string   `toml:"cert_file"`
	KeyFile    string   `toml:"key_file"`
	SelfSigned bool     `toml:"self_signed"`
	Hosts      []string `toml:"hosts"`
}

// Enabled reports whether the listener serves HTTPS.
func (t TLS) Enabled() bool { return t.SelfSigned || t.CertFile != "" }

// Bounds of the sign-in token lifetimes (Cognito's), the same as auth's
// (config does not import auth; TestTokenTTLBounds_AgreeWithAuth).
const (
	DefaultAccessTokenTTL  = 15 * time.Minute
	MinAccessTokenTTL      = 5 * time.Minute
	MaxAccessTokenTTL      = 24 * time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	MinRefreshTokenTTL     = time.Hour
	MaxRefreshTokenTTL     = 3650 * 24 * time.Hour
)

// Auth configures token verification.
type Auth struct {
	JWKSFile      string        `toml:"jwks_file"`
	PEMFile       string        `toml:"pem_file"`
	Issuer        string        `toml:"issuer"`
	Audience      string        `toml:"audience"`
	GroupsClaim   string        `toml:"groups_claim"`
	UsernameClaim string        `toml:"username_claim"`
	TokenTTL      time.Duration `toml:"token_ttl"`
	// AccessTokenTTL and RefreshTokenTTL are the lifetimes of the tokens
	// a sign-in (POST /login) gives (SERVICE-SPEC.md §5.10).
	AccessTokenTTL  time.Duration `toml:"access_token_ttl"`
	RefreshTokenTTL time.Duration `toml:"refresh_token_ttl"`
	// ConsoleIdleTimeout signs the web console out after that long
	// without input (1m to 24h).
	ConsoleIdleTimeout time.Duration `toml:"console_idle_timeout"`
	// OIDC* name an external identity provider the web console signs in
	// through (authorization code flow with PKCE, console/DESIGN.md): all
	// three of authorization URL, token URL and client id, or none. The
	// ID token is verified with jwks_file or pem_file and issuer.
	OIDCAuthorizationURL string   `toml:"oidc_authorization_url"`
	OIDCTokenURL         string   `toml:"oidc_token_url"`
	OIDCClientID         string   `toml:"oidc_client_id"`
	OIDCClientSecretFile string   `toml:"oidc_client_secret_file"`
	OIDCScopes           []string `toml:"oidc_scopes"`
	OIDCDisplayName      string   `toml:"oidc_display_name"`
}

// OIDCEnabled reports whether an identity provider is configured for the
// console's sign-in.
func (a Auth) OIDCEnabled() bool {
	return a.OIDCAuthorizationURL != "" || a.OIDCTokenURL != "" || a.OIDCClientID != ""
}

// Limits bound what one request may send.
type Limits struct {
	MaxUploadBytes int64 `toml:"max_upload_bytes"`
	MaxBodyBytes   int   `toml:"max_body_bytes"`
	MemoryLimitMiB int64 `toml:"memory_limit_mib"`
	// MaxConnsPerClient caps concurrent connections from one address.
	MaxConnsPerClient int `toml:"max_conns_per_client"`
}

// Storage sets the reserve of free space on the data disk: writes are
// refused while less than the larger of the two is free.
type Storage struct {
	MinFreeBytes   int64 `toml:"min_free_bytes"`
	MinFreePercent int   `toml:"min_free_percent"`
}

// Index configures the search index's housekeeping.
type Index struct {
	// MergeIdle is how long the index must be quiet (no change indexed)
	// before its segments are merged down; 0: never (index/DESIGN.md,
	// "Idle merge").
	MergeIdle time.Duration `toml:"merge_idle"`
}

// Log configures the process log.
type Log struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// Pipeline configures the action pipeline.
type Pipeline struct {
	Workers       int           `toml:"workers"`
	ActionTimeout time.Duration `toml:"action_timeout"`
	RetryBase     time.Duration `toml:"retry_base"`
	OCRMaxPages   int           `toml:"ocr_max_pages"`
	// OCRPageTimeout is how long OCR may spend on one page.
	OCRPageTimeout time.Duration `toml:"ocr_page_timeout"`
}

// Engines names the programs and services actions run.
type Engines struct {
	Tesseract string `toml:"tesseract"`
	Ocrmypdf  string `toml:"ocrmypdf"`
	Pdftotext string `toml:"pdftotext"`
	Pdftoppm  string `toml:"pdftoppm"`
	Soffice   string `toml:"soffice"`
	Clamd     string `toml:"clamd"`
}

// SMTP is the default mail server of NOTIFICATION actions.
type SMTP struct {
	Host     string `toml:"host"`
	Port     int    `toml:"port"`
	Security string `toml:"security"`
	CAFile   string `toml:"ca_file"`
	Username string `toml:"username"`
	Password string `toml:"password"`
	From     string `toml:"from"`
}

// LLM is the default OpenAI-compatible endpoint of LLM actions.
type LLM struct {
	URL    string `toml:"url"`
	Model  string `toml:"model"`
	APIKey string `toml:"api_key"`
	// RequireAgreement: LLM actions use only models an admin agreed to.
	RequireAgreement bool `toml:"require_agreement"`
}

// ESignature configures e-signature envelopes (API.md "E-signature").
type ESignature struct {
	// Environment is the envelopes' environment when a request names
	// none: PRODUCTION (default) or DEVELOPMENT.
	Environment string `toml:"environment"`
}

// Certify configures PDF signatures (certifications and signed
// envelopes).
type Certify struct {
	// TSAURL is an RFC 3161 time-stamping authority every signature is
	// timestamped by; empty: no timestamps.
	TSAURL string `toml:"tsa_url"`
	// TSACAFile holds PEM certificates the authority's must chain to.
	TSACAFile string `toml:"tsa_ca_file"`
}

// Webhooks configures outgoing WEBHOOK and event bus requests.
type Webhooks struct {
	Secret string `toml:"secret"`
	// Public opens POST /public/webhooks/... to callers without a token.
	Public bool `toml:"public"`
}

// Outbound is the policy for calls to destinations users choose
// (webhook URLs, a site's SMTP host and LLM url): networks allowed
// although refused by default (loopback, link-local) and networks denied
// although allowed by default (the LAN, the internet).
type Outbound struct {
	Allow []string `toml:"allow"`
	Deny  []string `toml:"deny"`
}

// Metrics is where /metrics is served and who may read it. Without a
// listener it is served on the API listener (Prometheus' convention);
// with one, only there. With a token, every scrape must send it as
// `Authorization: Bearer <token>`.
type Metrics struct {
	Listen string `toml:"listen"`
	Token  string `toml:"token"`
}

// Intake configures the scanner intake's watched folders (issue 32).
type Intake struct {
	// FolderRoot holds a folder per intake profile with a watched folder:
	// <folder_root>/<siteId>/<profile> (empty: none can be enabled).
	FolderRoot string `toml:"folder_root"`
	// Poll is how often the leader looks at the watched folders.
	Poll time.Duration `toml:"poll"`
}

// IntakeSMTP configures scan to e-mail (issue 32): an SMTP listener that
// takes scanners' mail into intake profiles. Listen empty: off.
type IntakeSMTP struct {
	Listen          string `toml:"listen"`
	Domain          string `toml:"domain"`
	MaxMessageBytes int64  `toml:"max_message_bytes"`
	MaxAttachments  int    `toml:"max_attachments"`
	// CertFile and KeyFile are STARTTLS's certificate (empty: the
	// server's own tls settings, when HTTPS is configured).
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
}

// Default is the configuration with nothing set.
func Default() *Config {
	return &Config{
		Listen:  "127.0.0.1:8080",
		DataDir: "./data",
		Auth: Auth{TokenTTL: time.Hour, AccessTokenTTL: DefaultAccessTokenTTL, RefreshTokenTTL: DefaultRefreshTokenTTL, ConsoleIdleTimeout: 15 * time.Minute,
			OIDCScopes: []string{"openid", "profile", "email"}, OIDCDisplayName: "single sign-on"},
		Limits:  Limits{MaxBodyBytes: 16 << 20, MemoryLimitMiB: 64, MaxConnsPerClient: 512},
		Storage: Storage{MinFreeBytes: 1 << 30, MinFreePercent: 2},
		Index:   Index{MergeIdle: 30 * time.Second},        // index.DefaultMergeIdle
		Cluster: Cluster{VerifyInterval: 10 * time.Minute}, // node.DefaultVerifyEvery
		Log:     Log{Level: "info", Format: "text"},
		Pipeline: Pipeline{
			Workers:       4,
			ActionTimeout: 15 * time.Minute,
			RetryBase:     10 * time.Second,
			OCRMaxPages:   500,
			// OCRPageTimeout: a dense A4 page at 300 dpi takes tesseract
			// 5-30 s on one core.
			OCRPageTimeout: 2 * time.Minute,
		},
		Engines:    Engines{Clamd: "unix:/run/clamav/clamd.ctl"},
		SMTP:       SMTP{Port: 25},
		Intake:     Intake{Poll: 2 * time.Second},
		IntakeSMTP: IntakeSMTP{MaxMessageBytes: 50 << 20, MaxAttachments: 20},
		RateLimit:  ratelimit.Defaults(),
	}
}

// BaseURL is the public URL, or the one derived from the listen address.
func (c *Config) BaseURL() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	scheme := "http://"
	if c.TLS.Enabled() {
		scheme = "https://"
	}
	return scheme + c.Listen
}
