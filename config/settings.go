package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"quire/ratelimit"
)

// setting is one configuration value: its key in the file, its name (the
// flag is --name, the variable QUIRE_NAME with dashes as underscores), its
// help, and where it lives in a Config.
type setting struct {
	key  string // dotted key in the file, e.g. "smtp.host"
	name string // flag name, e.g. "smtp-host"
	help string
	// secret settings are never flags (a command line is visible to every
	// user of the machine) and are printed commented out in the example.
	secret bool
	// example is shown, commented out, when the default is empty.
	example string
	ptr     func(c *Config) any
}

// Env is the environment variable of a setting.
func (s setting) Env() string {
	return "QUIRE_" + strings.ToUpper(strings.ReplaceAll(s.name, "-", "_"))
}

// settings lists every setting in the order `config example` prints them.
// Sections follow the first part of the key.
var settings = append([]setting{
	{key: "listen", name: "listen", help: "Address the HTTP API listens on. Use 0.0.0.0:8080 to serve the LAN.",
		ptr: func(c *Config) any { return &c.Listen }},
	{key: "data_dir", name: "data-dir", help: "Directory of the database, search index, keys and TLS certificate.",
		ptr: func(c *Config) any { return &c.DataDir }},
	{key: "public_url", name: "public-url", help: "Base URL clients reach this server at; upload and download URLs start with it. Default: http(s)://<listen>.",
		example: "https://quire.office.lan:8080", ptr: func(c *Config) any { return &c.PublicURL }},

	{key: "tls.cert_file", name: "tls-cert", help: "PEM certificate (with its chain) for HTTPS. Set together with key_file.",
		example: "/etc/quire/tls/cert.pem", ptr: func(c *Config) any { return &c.TLS.CertFile }},
	{key: "tls.key_file", name: "tls-key", help: "PEM private key of cert_file.",
		example: "/etc/quire/tls/key.pem", ptr: func(c *Config) any { return &c.TLS.KeyFile }},
	{key: "tls.self_signed", name: "tls-self-signed", help: "Serve HTTPS with a self-signed certificate generated into <data_dir>/tls on first start (LAN use without a CA).",
		ptr: func(c *Config) any { return &c.TLS.SelfSigned }},
	{key: "tls.hosts", name: "tls-hosts", help: "Extra host names and IP addresses of the self-signed certificate (the listen address and this machine's name are always in it).",
		example: `["quire.office.lan", "192.168.1.20"]`, ptr: func(c *Config) any { return &c.TLS.Hosts }},

	{key: "auth.jwks_file", name: "jwks-file", help: "JWKS file of an external identity provider (Keycloak, AD FS). Quire's own tokens (quire token) are always accepted.",
		example: "/etc/quire/idp-jwks.json", ptr: func(c *Config) any { return &c.Auth.JWKSFile }},
	{key: "auth.pem_file", name: "jwt-pem", help: "PEM public key of an external identity provider.",
		example: "/etc/quire/idp.pem", ptr: func(c *Config) any { return &c.Auth.PEMFile }},
	{key: "auth.issuer", name: "jwt-issuer", help: "Issuer (iss) external tokens must carry.",
		example: "https://sso.office.lan/realms/office", ptr: func(c *Config) any { return &c.Auth.Issuer }},
	{key: "auth.audience", name: "jwt-audience", help: "Audience (aud) external tokens must carry.",
		example: "quire", ptr: func(c *Config) any { return &c.Auth.Audience }},
	{key: "auth.groups_claim", name: "groups-claim", help: "Token claim holding the user's groups. Default: cognito:groups (FormKiQ).",
		example: "groups", ptr: func(c *Config) any { return &c.Auth.GroupsClaim }},
	{key: "auth.username_claim", name: "username-claim", help: "Token claim holding the username. Default: cognito:username (FormKiQ).",
		example: "preferred_username", ptr: func(c *Config) any { return &c.Auth.UsernameClaim }},
	{key: "auth.token_ttl", name: "token-ttl", help: "Lifetime of the access tokens `quire token` signs.",
		ptr: func(c *Config) any { return &c.Auth.TokenTTL }},
	{key: "auth.access_token_ttl", name: "access-token-ttl", help: "Lifetime of the access and ID tokens a sign-in (POST /login, /login/refresh) gives: 5m to 24h.",
		ptr: func(c *Config) any { return &c.Auth.AccessTokenTTL }},
	{key: "auth.refresh_token_ttl", name: "refresh-token-ttl", help: "How long a sign-in's refresh token signs in again: 1h to 87600h (ten years), longer than access_token_ttl.",
		ptr: func(c *Config) any { return &c.Auth.RefreshTokenTTL }},
	{key: "auth.console_idle_timeout", name: "console-idle-timeout", help: "The web console signs out after this long without a key press, click or pointer move: 1m to 24h (default 15m).",
		ptr: func(c *Config) any { return &c.Auth.ConsoleIdleTimeout }},

	{key: "auth.oidc_authorization_url", name: "oidc-authorization-url", help: "Authorization endpoint of the identity provider the web console signs in through (OpenID Connect, authorization code flow with PKCE). Set together with oidc_token_url and oidc_client_id, and with jwks_file or pem_file and issuer, which verify its ID tokens. Register <public_url>/login/oidc/callback as the client's redirect URI.",
		example: "https://sso.office.lan/realms/office/protocol/openid-connect/auth", ptr: func(c *Config) any { return &c.Auth.OIDCAuthorizationURL }},
	{key: "auth.oidc_token_url", name: "oidc-token-url", help: "Token endpoint of the identity provider: Quire exchanges the sign-in's code there (10 s timeout, answers up to 1 MiB).",
		example: "https://sso.office.lan/realms/office/protocol/openid-connect/token", ptr: func(c *Config) any { return &c.Auth.OIDCTokenURL }},
	{key: "auth.oidc_client_id", name: "oidc-client-id", help: "Client id of Quire at the identity provider; the ID token's aud must name it.",
		example: "quire-console", ptr: func(c *Config) any { return &c.Auth.OIDCClientID }},
	{key: "auth.oidc_client_secret_file", name: "oidc-client-secret-file", help: "File holding the client secret (sent as HTTP Basic auth to the token endpoint). Empty: a public client, PKCE alone.",
		example: "/etc/quire/oidc-client-secret", ptr: func(c *Config) any { return &c.Auth.OIDCClientSecretFile }},
	{key: "auth.oidc_scopes", name: "oidc-scopes", help: "Scopes asked for at sign-in; openid is required. Add the scope that puts the groups claim (groups_claim) in the ID token if the provider needs one.",
		ptr: func(c *Config) any { return &c.Auth.OIDCScopes }},
	{key: "auth.oidc_display_name", name: "oidc-display-name", help: "Name on the console's \"Sign in with ...\" button.",
		ptr: func(c *Config) any { return &c.Auth.OIDCDisplayName }},

	{key: "limits.max_upload_bytes", name: "max-upload-bytes", help: "Largest accepted upload in bytes (0: unlimited).",
		ptr: func(c *Config) any { return &c.Limits.MaxUploadBytes }},
	{key: "limits.max_body_bytes", name: "max-body-bytes", help: "Largest JSON request body in bytes; inline content over 5 MB is refused regardless (FormKiQ's limit).",
		ptr: func(c *Config) any { return &c.Limits.MaxBodyBytes }},
	{key: "limits.memory_limit_mib", name: "memory-limit-mib", help: "Soft limit of the Go heap in MiB, raised by 64 MiB while a search index batch is built (0: none; GOMEMLIMIT wins when set).",
		ptr: func(c *Config) any { return &c.Limits.MemoryLimitMiB }},
	{key: "limits.max_conns_per_client", name: "max-conns-per-client", help: "Concurrent connections one client address may hold; more are closed at accept (0: unlimited). Generous, as scanners or a whole office may share one NAT address; behind a reverse proxy every client has the proxy's address.",
		ptr: func(c *Config) any { return &c.Limits.MaxConnsPerClient }},

	{key: "storage.min_free_bytes", name: "min-free-bytes", help: "Free space in bytes kept on the data disk for the store's own housekeeping: below it (or below min_free_percent, whichever is larger) writes get 507 until space is freed. At least what the store may still write through memory-mapped files (about 195 MiB; quire config check says the exact figure).",
		ptr: func(c *Config) any { return &c.Storage.MinFreeBytes }},
	{key: "storage.min_free_percent", name: "min-free-percent", help: "Free space kept on the data disk, in percent of its size (0: none).",
		ptr: func(c *Config) any { return &c.Storage.MinFreePercent }},

	{key: "index.merge_idle", name: "index-merge-idle", help: "Once no change has been indexed for this long, a search index with more than 4 segments is merged down to 2 in the background (queries then visit fewer segments), then the cached best hits of the most frequent words are built ahead of the queries; a change stops both. 0: never (neither). At most 24h.",
		ptr: func(c *Config) any { return &c.Index.MergeIdle }},

	{key: "cluster.node_id", name: "node-id", help: "This node's id in a Raft cluster of Quire nodes (letters, digits, . _ -; never changes). Empty: a single server, no cluster.",
		example: "n1", ptr: func(c *Config) any { return &c.Cluster.NodeID }},
	{key: "cluster.raft_listen", name: "raft-listen", help: "Address of the cluster port (Raft and forwarded writes, mutual TLS); other members dial it, so not 0.0.0.0. Required with node_id.",
		example: "10.0.0.1:7001", ptr: func(c *Config) any { return &c.Cluster.RaftListen }},
	{key: "cluster.bootstrap", name: "bootstrap", help: "Start a new cluster with this node as its first member (creates the cluster CA in <data_dir>/raft/tls). Only on the first start of the first node; ignored once the node has cluster state.",
		ptr: func(c *Config) any { return &c.Cluster.Bootstrap }},
	{key: "cluster.join", name: "join", help: "HTTPS URL of any member's API this node joins at its first start (with join_token); ignored once the node has cluster state. It must reach the member's own TLS listener (tls.self_signed or tls.cert_file), not a proxy that ends TLS: the member proves it is of the cluster with its cluster certificate.",
		example: "https://10.0.0.1:8080", ptr: func(c *Config) any { return &c.Cluster.Join }},
	{key: "cluster.join_token", name: "join-token", help: "Join token an admin issued on a member (quire cluster token): short-lived, single use, traded for this node's certificate and the cluster's keys. QUIRE_JOIN_TOKEN keeps it out of the process list.",
		example: "quirejoin1.…", ptr: func(c *Config) any { return &c.Cluster.JoinToken }},
	{key: "cluster.verify_interval", name: "verify-interval", help: "How often the leader has every member hash its data at one log index and compares the digests (a member that differs is demoted and refuses to serve until rebuilt); each check reads every record of every member's store, not the content. 0: only on demand (quire cluster verify). 1m to 168h otherwise.",
		ptr: func(c *Config) any { return &c.Cluster.VerifyInterval }},

	{key: "log.level", name: "log-level", help: "Log level: debug, info, warn or error.",
		ptr: func(c *Config) any { return &c.Log.Level }},
	{key: "log.format", name: "log-format", help: "Log format: text or json (one object per line, for journald or a log shipper).",
		ptr: func(c *Config) any { return &c.Log.Format }},

	{key: "pipeline.workers", name: "pipeline-workers", help: "Actions run at once.",
		ptr: func(c *Config) any { return &c.Pipeline.Workers }},
	{key: "pipeline.action_timeout", name: "action-timeout", help: "Longest run of one action's engine; a run cut short is retried.",
		ptr: func(c *Config) any { return &c.Pipeline.ActionTimeout }},
	{key: "pipeline.retry_base", name: "retry-base", help: "Wait before the first retry of an action whose engine failed transiently; doubles per attempt.",
		ptr: func(c *Config) any { return &c.Pipeline.RetryBase }},
	{key: "pipeline.ocr_max_pages", name: "ocr-max-pages", help: "Most pages of a PDF one OCR action renders; a longer PDF fails before anything is rendered unless the action's ocrNumberOfPages asks for fewer.",
		ptr: func(c *Config) any { return &c.Pipeline.OCRMaxPages }},
	{key: "pipeline.ocr_page_timeout", name: "ocr-page-timeout", help: "Longest OCR of one page; a page not recognized by then is left without text and named in the action's message (retry the action to try again).",
		ptr: func(c *Config) any { return &c.Pipeline.OCRPageTimeout }},

	{key: "intake.folder_root", name: "intake-folder-root", help: "Root of the scanner intake's watched folders: an intake profile with watchFolder enabled polls <folder_root>/<siteId>/<profile> (share it over SMB). Empty: watched folders cannot be enabled.",
		example: "/srv/quire-scans", ptr: func(c *Config) any { return &c.Intake.FolderRoot }},
	{key: "intake.poll", name: "intake-poll", help: "How often the leader looks at the watched folders (a file is taken once unchanged for its profile's stableSeconds).",
		ptr: func(c *Config) any { return &c.Intake.Poll }},

	{key: "intake_smtp.listen", name: "intake-smtp-listen", help: "Address of the scan-to-e-mail SMTP listener (scanners send to profile@… or site+profile@…, AUTH with a Quire user or an intake API key). Empty: off.",
		example: "0.0.0.0:2525", ptr: func(c *Config) any { return &c.IntakeSMTP.Listen }},
	{key: "intake_smtp.domain", name: "intake-smtp-domain", help: "Name in the SMTP greeting. Default: this machine's name.",
		example: "scans.office.lan", ptr: func(c *Config) any { return &c.IntakeSMTP.Domain }},
	{key: "intake_smtp.max_message_bytes", name: "intake-smtp-max-message-bytes", help: "Largest mail the SMTP listener takes (SIZE; a larger one is answered 552).",
		ptr: func(c *Config) any { return &c.IntakeSMTP.MaxMessageBytes }},
	{key: "intake_smtp.max_attachments", name: "intake-smtp-max-attachments", help: "Most attachments in one mail (more are answered 550).",
		ptr: func(c *Config) any { return &c.IntakeSMTP.MaxAttachments }},
	{key: "intake_smtp.cert_file", name: "intake-smtp-cert", help: "PEM certificate for STARTTLS. Default: the server's tls settings; without either, a self-signed certificate made in <data_dir>/tls at the first start (its SHA-256 fingerprint is in the log and in quire doctor).",
		example: "/etc/quire/tls/smtp-cert.pem", ptr: func(c *Config) any { return &c.IntakeSMTP.CertFile }},
	{key: "intake_smtp.key_file", name: "intake-smtp-key", help: "PEM private key of intake_smtp.cert_file.",
		example: "/etc/quire/tls/smtp-key.pem", ptr: func(c *Config) any { return &c.IntakeSMTP.KeyFile }},

	{key: "engines.tesseract", name: "tesseract", help: "tesseract program for OCR (default: found on PATH; Debian package tesseract-ocr).",
		example: "/usr/bin/tesseract", ptr: func(c *Config) any { return &c.Engines.Tesseract }},
	{key: "engines.ocrmypdf", name: "ocrmypdf", help: "ocrmypdf program that makes OCR's searchable PDF/A when ghostscript has no sRGB profile to embed (package ocrmypdf).",
		example: "/usr/bin/ocrmypdf", ptr: func(c *Config) any { return &c.Engines.Ocrmypdf }},
	{key: "engines.pdftotext", name: "pdftotext", help: "pdftotext program for the text of PDFs (package poppler-utils).",
		example: "/usr/bin/pdftotext", ptr: func(c *Config) any { return &c.Engines.Pdftotext }},
	{key: "engines.pdftoppm", name: "pdftoppm", help: "pdftoppm program to render PDF pages for OCR (package poppler-utils).",
		example: "/usr/bin/pdftoppm", ptr: func(c *Config) any { return &c.Engines.Pdftoppm }},
	{key: "engines.soffice", name: "soffice", help: "LibreOffice soffice program for Office text and PDFEXPORT (package libreoffice-writer-nogui).",
		example: "/usr/bin/soffice", ptr: func(c *Config) any { return &c.Engines.Soffice }},
	{key: "engines.clamd", name: "clamd", help: "clamd address for ANTIVIRUS and MALWARE_SCAN: unix:/path or tcp:host:port (package clamav-daemon).",
		ptr: func(c *Config) any { return &c.Engines.Clamd }},

	{key: "smtp.host", name: "smtp-host", help: "The server's own mail server: the only one directory mail (temporary passwords, reset codes) goes through, and the default of NOTIFICATION actions (a site's notification settings win for those). Without host and from, mailed resets are refused.",
		example: "mail.office.lan", ptr: func(c *Config) any { return &c.SMTP.Host }},
	{key: "smtp.port", name: "smtp-port", help: "Mail server port.",
		ptr: func(c *Config) any { return &c.SMTP.Port }},
	{key: "smtp.security", name: "smtp-security", help: "Connection security: STARTTLS, IMPLICIT_TLS, or empty for none.",
		example: "STARTTLS", ptr: func(c *Config) any { return &c.SMTP.Security }},
	{key: "smtp.ca_file", name: "smtp-ca-file", help: "PEM certificates of the authorities the mail server's TLS certificate must come from (a LAN relay with its own CA). Default: the system's.",
		example: "/etc/quire/smtp-ca.pem", ptr: func(c *Config) any { return &c.SMTP.CAFile }},
	{key: "smtp.username", name: "smtp-username", help: "Mail server user.",
		example: "quire", ptr: func(c *Config) any { return &c.SMTP.Username }},
	{key: "smtp.password", name: "smtp-password", secret: true, help: "Mail server password (or QUIRE_SMTP_PASSWORD; never a flag).",
		example: "change-me", ptr: func(c *Config) any { return &c.SMTP.Password }},
	{key: "smtp.from", name: "smtp-from", help: "Sender address of directory mail, and the default of notifications (a site's notification email wins for those).",
		example: "quire@office.lan", ptr: func(c *Config) any { return &c.SMTP.From }},

	{key: "llm.url", name: "llm-url", help: "Default OpenAI-compatible endpoint of LLM actions (a site's llm settings win).",
		example: "http://127.0.0.1:11434/v1", ptr: func(c *Config) any { return &c.LLM.URL }},
	{key: "llm.model", name: "llm-model", help: "Default model of LLM actions.",
		example: "llama3.1", ptr: func(c *Config) any { return &c.LLM.Model }},
	{key: "llm.api_key", name: "llm-api-key", secret: true, help: "API key of the endpoint (or QUIRE_LLM_API_KEY; never a flag).",
		example: "change-me", ptr: func(c *Config) any { return &c.LLM.APIKey }},
	{key: "llm.require_agreement", name: "llm-require-agreement", help: "LLM actions use only models whose usage agreement an admin accepted (POST /system/inferenceModels/agreement); actions naming another model fail with a message.",
		example: "true", ptr: func(c *Config) any { return &c.LLM.RequireAgreement }},

	{key: "esignature.environment", name: "esignature-environment", help: "Environment of e-signature envelopes whose request names none: PRODUCTION (default) or DEVELOPMENT (the signing page and mails say it is a test).",
		example: "DEVELOPMENT", ptr: func(c *Config) any { return &c.ESignature.Environment }},

	{key: "certify.tsa_url", name: "tsa-url", help: "RFC 3161 time-stamping authority (http or https URL; user:password@ in it is sent as basic auth) that timestamps every PDF signature Quire makes. A signature the authority cannot stamp fails instead of going out unstamped. Default: none.",
		example: "http://tsa.office.lan/tsr", ptr: func(c *Config) any { return &c.Certify.TSAURL }},
	{key: "certify.tsa_ca_file", name: "tsa-ca-file", help: "PEM certificates of the authorities the TSA's certificate must chain to (for time stamping). Default: the token's signature is checked, not who made it.",
		example: "/etc/quire/tsa-ca.pem", ptr: func(c *Config) any { return &c.Certify.TSACAFile }},

	{key: "webhooks.secret", name: "webhook-secret", secret: true, help: "Shared secret signing WEBHOOK and event bus requests (X-Quire-Signature, HMAC-SHA256; or QUIRE_WEBHOOK_SECRET).",
		example: "change-me", ptr: func(c *Config) any { return &c.Webhooks.Secret }},
	{key: "webhooks.public", name: "public-webhooks", help: "Take payloads at POST /public/webhooks/<webhookId> without a token (FormKiQ's public webhooks, off by default); POST /private/webhooks/... always needs one.",
		example: "true", ptr: func(c *Config) any { return &c.Webhooks.Public }},

	{key: "event_buses", name: "event-bus", help: "Event buses: eventBusName = URL CloudEvents are posted to, by EVENTBRIDGE actions and with every document event (API.md, Document events). Flag: --event-bus name=url (repeatable); variable: QUIRE_EVENT_BUS=name=url,name=url.",
		example: `office = "http://127.0.0.1:9000/events"`, ptr: func(c *Config) any { return &c.EventBuses }},

	{key: "outbound.allow", name: "outbound-allow", help: "Networks that destinations users choose (WEBHOOK urls, a site's SMTP host and LLM url) may reach although refused by default: loopback, link-local (169.254.0.0/16, cloud metadata), unspecified and multicast addresses are refused unless listed here. The LAN and the internet are allowed unless denied. Destinations in this file (llm.url, smtp.host, event_buses) are trusted as given.",
		example: `["127.0.0.0/8"]`, ptr: func(c *Config) any { return &c.Outbound.Allow }},
	{key: "outbound.deny", name: "outbound-deny", help: "Networks that destinations users choose may not reach (allow wins): [\"10.0.0.0/8\", \"172.16.0.0/12\", \"192.168.0.0/16\"] keeps users' webhooks off the LAN; [\"0.0.0.0/0\", \"::/0\"] allows only the networks of outbound.allow.",
		example: `["0.0.0.0/0", "::/0"]`, ptr: func(c *Config) any { return &c.Outbound.Deny }},

	{key: "metrics.listen", name: "metrics-listen", help: "A separate listener for GET /metrics (plain HTTP, e.g. 127.0.0.1:9464 or a management VLAN's address); when set, the API listener no longer serves /metrics. Default: /metrics on the API listener.",
		example: "127.0.0.1:9464", ptr: func(c *Config) any { return &c.Metrics.Listen }},
	{key: "metrics.token", name: "metrics-token", secret: true, help: "Bearer token every scrape of /metrics must send (Prometheus: authorization { credentials: ... }); at least 16 characters (or QUIRE_METRICS_TOKEN). Default: none, /metrics answers anyone who reaches its listener.",
		example: "a-long-random-string", ptr: func(c *Config) any { return &c.Metrics.Token }},
}, rateLimitSettings()...)

// rateLimitSettings are the [ratelimit] table: one setting per route class
// of the ratelimit package, whose class list is the only one.
func rateLimitSettings() []setting {
	out := make([]setting, 0, len(ratelimit.Classes))
	for _, cl := range ratelimit.Classes {
		name := cl.Name
		out = append(out, setting{key: "ratelimit." + name, name: "ratelimit-" + name,
			help: "Rate limit of " + cl.Help + ` Format: "RATE burst N, global RATE burst N" (RATE as 10/s, 10/min or 10/h): per client address, then for all clients; over it the answer is 429 with Retry-After.`,
			ptr:  func(c *Config) any { return mapEntry{m: &c.RateLimit, k: name} }})
	}
	return out
}

// mapEntry is a setting held as one entry of a map of the Config (the
// [ratelimit] table, whose keys are fixed by the ratelimit package).
type mapEntry struct {
	m *map[string]string
	k string
}

func lookup(name string) (setting, bool) {
	for _, s := range settings {
		if s.name == name || s.key == name {
			return s, true
		}
	}
	return setting{}, false
}

// set parses v into the setting's field of c.
func (s setting) set(c *Config, v string) error {
	switch p := s.ptr(c).(type) {
	case *string:
		*p = v
	case *bool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", v)
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", v)
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("want a whole number, got %q", v)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("want a duration such as 30s, 15m or 2h, got %q", v)
		}
		*p = d
	case *[]string:
		*p = nil
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				*p = append(*p, x)
			}
		}
	case mapEntry:
		if *p.m == nil {
			*p.m = map[string]string{}
		}
		(*p.m)[p.k] = v
	case *map[string]string:
		for _, x := range strings.Split(v, ",") {
			name, url, ok := strings.Cut(strings.TrimSpace(x), "=")
			if !ok || name == "" {
				return fmt.Errorf("want name=url, got %q", x)
			}
			if *p == nil {
				*p = map[string]string{}
			}
			(*p)[name] = url
		}
	default:
		panic("config: no parser for " + s.key)
	}
	return nil
}

// format renders the setting's value as a TOML value.
func (s setting) format(c *Config) string {
	switch p := s.ptr(c).(type) {
	case *string:
		return strconv.Quote(*p)
	case mapEntry:
		return strconv.Quote((*p.m)[p.k])
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *time.Duration:
		return strconv.Quote(shortDuration(*p))
	case *[]string:
		q := make([]string, len(*p))
		for i, x := range *p {
			q[i] = strconv.Quote(x)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case *map[string]string:
		keys := make([]string, 0, len(*p))
		for k := range *p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		q := make([]string, len(keys))
		for i, k := range keys {
			q[i] = strconv.Quote(k) + " = " + strconv.Quote((*p)[k])
		}
		return "{ " + strings.Join(q, ", ") + " }"
	}
	panic("config: no formatter for " + s.key)
}

// empty reports whether the setting holds its type's zero value.
func (s setting) empty(c *Config) bool {
	switch p := s.ptr(c).(type) {
	case *string:
		return *p == ""
	case mapEntry:
		return (*p.m)[p.k] == ""
	case *[]string:
		return len(*p) == 0
	case *map[string]string:
		return len(*p) == 0
	}
	return false
}

// flagValue adapts a setting to flag.Value; Set records the flag as the
// setting's origin.
type flagValue struct {
	s      setting
	c      *Config
	origin map[string]string
	reset  bool // a repeatable map flag replaces the file's map on first use
}

func (f *flagValue) String() string {
	if f.c == nil {
		return ""
	}
	if _, ok := f.s.ptr(f.c).(*string); ok {
		return *f.s.ptr(f.c).(*string)
	}
	if e, ok := f.s.ptr(f.c).(mapEntry); ok {
		return (*e.m)[e.k]
	}
	if f.s.empty(f.c) {
		return ""
	}
	return strings.Trim(f.s.format(f.c), `"`)
}

func (f *flagValue) Set(v string) error {
	if m, ok := f.s.ptr(f.c).(*map[string]string); ok && !f.reset {
		*m = nil
		f.reset = true
	}
	if err := f.s.set(f.c, v); err != nil {
		return err
	}
	f.origin[f.s.key] = "--" + f.s.name
	return nil
}

func (f *flagValue) IsBoolFlag() bool {
	_, ok := f.s.ptr(f.c).(*bool)
	return ok
}

// shortDuration prints 1h rather than 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
