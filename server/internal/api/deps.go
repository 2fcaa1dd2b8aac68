package api

import (
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quire/auth"
	"quire/certify"
	"quire/cluster"
	"quire/index"
	"quire/pipeline"
	"quire/pipeline/pdfwork"
	"quire/storage"
)

// ClusterInfo is what the server asks of the node's cluster member
// (*cluster.Node); nil on a single server.
type ClusterInfo interface {
	Status() cluster.Status
}

// Timeouts bound how long a client may hold a connection without making
// progress. Zero fields take the defaults below.
//
// fasthttp's own ReadTimeout covers a whole request, body included, and
// its WriteTimeout a whole response: either would cut off a 1 GiB upload
// or download over a slow link. So fasthttp only enforces Header (its
// ReadTimeout) and Idle; once a handler runs, the wrapped connection
// extends its read deadline by Body each time it reads, and every write by
// Write, so a transfer that keeps moving never times out while one that
// stalls is closed.
type Timeouts struct {
	// Header bounds the request line, the headers and the first 8 KiB of
	// the body fasthttp reads before the handler runs, from the moment
	// the connection is accepted or the next request's first byte. A
	// client that sends half a header and waits is closed after it.
	Header time.Duration
	// Idle bounds the wait for the next request on a kept-alive
	// connection.
	Idle time.Duration
	// Body bounds each pause in a request body a handler reads.
	Body time.Duration
	// Write bounds each write of a response (a pause of the reader).
	Write time.Duration
	// Drain bounds the whole discard of a body a handler left unread
	// (the answer was an error); past it the connection is closed.
	Drain time.Duration
	// TLSHandshake bounds the TLS handshake of a new connection.
	TLSHandshake time.Duration
}

// DefaultTimeouts are the production values.
var DefaultTimeouts = Timeouts{
	Header:       30 * time.Second,
	Idle:         120 * time.Second,
	Body:         60 * time.Second,
	Write:        60 * time.Second,
	Drain:        30 * time.Second,
	TLSHandshake: 10 * time.Second,
}

// OrDefault fills zero fields from DefaultTimeouts.
func (t Timeouts) OrDefault() Timeouts {
	d := DefaultTimeouts
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.Header, &d.Header}, {&t.Idle, &d.Idle}, {&t.Body, &d.Body},
		{&t.Write, &d.Write}, {&t.Drain, &d.Drain}, {&t.TLSHandshake, &d.TLSHandshake},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// Clock is the scheduler's time: Now, and a channel that receives once d
// has passed. Tests give a clock they move by hand.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Deps is what the server needs from the rest of the node.
type Deps struct {
	// Store serves reads. Writes go through Applier.
	Store *storage.DB
	// Applier applies commands: the store itself, or a cluster node.
	Applier storage.Applier
	// Cluster is the node's cluster member (nil: a single server): GET
	// /cluster/status and /readyz report it.
	Cluster ClusterInfo
	// Index answers fulltext, filename and folder-prefix searches.
	Index *index.Index
	// Indexer feeds the index (tests wait on its text extraction).
	Indexer *index.Indexer
	// Auth verifies tokens and API keys and signs URLs.
	Auth *auth.Authenticator
	// PublicURL is the base of upload and download URLs handed to clients.
	PublicURL string
	// LinksFromHost: no public URL was configured, PublicURL is derived
	// from the listener. Links in answers then start with the request's
	// Host when it names this machine on ListenAddr's port (localhost,
	// the host name, HostNames, an address of the machine), else with the
	// address the client connected to (linkbase.go); links made outside a
	// request (mails, webhook payloads) keep PublicURL.
	LinksFromHost bool
	// ListenAddr is the API listener's bound address.
	ListenAddr string
	// HostNames are more names of this machine (tls.hosts).
	HostNames []string
	// Pipeline runs actions: /readyz reports its state, a site's test
	// notification goes through it, and destinations users give are
	// checked against its outbound policy (nil: none of these).
	Pipeline Pipeline
	// Actions are the action types the API accepts, with their parameter
	// checks: the ones the pipeline runs (default: pipeline.Actions()).
	Actions *pipeline.Registry
	// Logger receives access and error logs. Default: slog.Default().
	Logger *slog.Logger
	// Version is reported by GET /version.
	Version string
	// Now returns the current time. Default: time.Now.
	Now func() time.Time
	// Clock is the daily scheduler's time (scheduler.go). Default: Now
	// with the runtime's timers.
	Clock Clock
	// MaxBodyBytes limits JSON request bodies. Default: 16 MiB, enough for
	// 5 MB of base64 inline content.
	MaxBodyBytes int
	// MaxUploadBytes limits a single upload (0: unlimited).
	MaxUploadBytes int64
	// PublicWebhooks takes webhook payloads without a token at
	// /public/webhooks/ (FormKiQ's public webhooks, off by default).
	PublicWebhooks bool
	// ESignatureEnv is the default environment of envelopes
	// (esignature.environment).
	ESignatureEnv string
	// TSA timestamps every PDF signature (certify.tsa_url; nil: none).
	TSA *certify.TSA
	// RequireModelAgreement: LLM actions use only agreed models, and the
	// model listing says which are (llm.require_agreement).
	RequireModelAgreement bool
	// DataDir is the node's data dir; online backups carry its keys.
	DataDir string
	// TLSCertificate is the listener's certificate (nil: plain HTTP); GET
	// /system/health reports its expiry.
	TLSCertificate *x509.Certificate
	// SMTPCertificate is the scan-to-e-mail listener's STARTTLS
	// certificate (nil: none): GET /system/health reports its expiry and
	// SHA-256 fingerprint, which scanners that pin are given.
	SMTPCertificate *x509.Certificate
	// ClusterTLS is a cluster member's TLS identity (nil: a single
	// server): GET /system/health reports the expiry of its certificate,
	// the certificates peers presented to it, and the cluster CA's.
	ClusterTLS *cluster.Identity
	// SecretsWrapKey is the key a rotated secrets key is wrapped with for
	// a cluster's members (nil, or returning nil: a single server, which
	// stages the new key in its data dir).
	SecretsWrapKey func() ([]byte, error)
	// Metrics receives the HTTP metrics and is served at /metrics
	// (default: a registry of the server's own).
	Metrics *prometheus.Registry
	// MetricsToken, when set, is the bearer token every scrape of
	// /metrics must send (metrics.token).
	MetricsToken string
	// MetricsElsewhere: /metrics is served by a listener of its own
	// (metrics.listen, MetricsHTTP), and the API listener answers 404.
	MetricsElsewhere bool
	// Timeouts bound slow and idle clients (zero fields: DefaultTimeouts).
	Timeouts Timeouts
	// MaxConnsPerClient caps concurrent connections from one client
	// address (0: DefaultMaxConnsPerClient; negative: unlimited).
	MaxConnsPerClient int
	// IntakeFolderRoot is the root of intake profiles' watched folders
	// (intake.folder_root; empty: watched folders cannot be enabled).
	IntakeFolderRoot string
	// IntakePoll is how often watched folders are polled (default 2s).
	IntakePoll time.Duration
	// RateLimit is the limit spec of each route class of the routes that
	// need no token (ratelimit.Parse's format; a class not named: its
	// default).
	RateLimit map[string]string
}

// Pipeline is what the server asks of the action pipeline.
type Pipeline interface {
	// Status reports whether the pipeline runs, how many documents wait
	// or run, and how overdue the oldest is (GET /readyz).
	Status() (running bool, queued int, oldest time.Duration)
	// SendTestMail sends a site's test notification.
	SendTestMail(ctx context.Context, site, to string) error
	// Models lists the model ids of the server's LLM endpoint.
	Models(ctx context.Context) ([]string, error)
	// ExaminePDF reports what a PDF holds (GET /objects/examine/{id}/pdf).
	ExaminePDF(ctx context.Context, r io.Reader) (*pdfwork.PDFReport, error)
	// SendUserMail mails a directory user (a temporary password, a reset
	// code) through the server's own mail settings only, never a site's.
	SendUserMail(ctx context.Context, to, subject, text string) error
	// ServerMail reports whether the server has mail settings of its own
	// (nil) or why not (pipeline.ErrNoServerMail).
	ServerMail() error
	// ServerMailSettings describes the server's own mail settings (no
	// credentials), for GET /system/health.
	ServerMailSettings() pipeline.ServerMailInfo
	// SendServerTestMail sends a test mail through the server's own mail
	// settings only (POST /system/mail/test).
	SendServerTestMail(ctx context.Context, to string) error
	// SendSiteMail sends one mail through a site's mail settings.
	SendSiteMail(ctx context.Context, site, to, subject, text string) error
	// SignedCopy appends a signature page to a PDF (e-signature).
	SignedCopy(ctx context.Context, src io.Reader, page pdfwork.SignaturePage) (*pdfwork.Generated, error)
	// Generate fills a template and renders it (POST .../generate).
	Generate(ctx context.Context, req pdfwork.GenerateRequest) (*pdfwork.Generated, error)
	// CheckProcessing validates a site's processing section (its OCR
	// languages against the installed ones, its default actions).
	CheckProcessing(ctx context.Context, c *storage.ProcessingConfig) []storage.ValidationItem
	// InstalledOCRLanguages lists the languages tesseract has (an OCR
	// action's ocrLanguages parameter is checked against them).
	InstalledOCRLanguages(ctx context.Context) ([]string, error)
	// SiteOCRLanguages lists the languages a site's scans are read in
	// (its processing.languages, or the default ones tesseract has).
	SiteOCRLanguages(ctx context.Context, c *storage.SiteConfig) ([]string, error)
	Destinations
}

// Destinations checks destinations users give against the outbound
// policy (the pipeline, which calls them).
type Destinations interface {
	CheckWebhookURL(u string) error
	CheckSiteLLMURL(u string) error
	CheckSiteSMTPHost(host string) error
}
