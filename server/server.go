package server

import (
	"context"
	"crypto/x509"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"quire/auth"
	"quire/certify"
	"quire/cluster"
	"quire/guard"
	"quire/index"
	"quire/intake"
	"quire/pipeline"
	"quire/server/internal/api"
	"quire/server/vocabulary"
	"quire/storage"
)

// DocumentJSON renders a stored document with FormKiQ's read fields.
// DocumentJSON renders a document as GET /documents/{id} does (webhook
// bodies use it too).
func DocumentJSON(d *storage.Document) map[string]any { return api.DocumentJSON(d) }

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
	ExaminePDF(ctx context.Context, r io.Reader) (*pipeline.PDFReport, error)
	// SendUserMail mails a directory user (a temporary password, a reset
	// code) through the server's own mail settings only, never a site's.
	SendUserMail(ctx context.Context, to, subject, text string) error
	// ServerMail reports whether the server has mail settings of its own
	// (nil) or why not (pipeline.ErrNoServerMail).
	ServerMail() error
	// SendSiteMail sends one mail through a site's mail settings.
	SendSiteMail(ctx context.Context, site, to, subject, text string) error
	// SignedCopy appends a signature page to a PDF (e-signature).
	SignedCopy(ctx context.Context, src io.Reader, page pipeline.SignaturePage) (*pipeline.Generated, error)
	// Generate fills a template and renders it (POST .../generate).
	Generate(ctx context.Context, req pipeline.GenerateRequest) (*pipeline.Generated, error)
	Destinations
}

// Server is Quire's HTTP API.
type Server struct {
	// certifyEnvelope, when set, certifies the signed copy of an envelope
	// with the site's certificate (esign.go).
	certifyEnvelope func(ctx context.Context, site string, in *os.File) (*os.File, error)

	app *fiber.App
	// oidcSeen remembers the states of finished OIDC sign-ins (oidc.go).
	oidcSeen oidcSeen
	// routeTable matches requests to routes for the Idempotency-Key
	// check (requestkeys.go).
	routeTable *routeTable
	deps       Deps
	// env is what the request API shares with every handler (env.go).
	*api.Env
	// The domains' handlers, each on the shared Env.
	vocabulary *vocabulary.Handlers
	bg         *background
	// conns lets Shutdown close connections that never sent a request.
	conns *connTracker
	// moves runs asynchronous folder moves.
	moves *folderMoves
	// dest checks destinations users give (webhook urls, a site's LLM
	// url and SMTP host) against the outbound policy (Deps.Pipeline).
	dest Destinations
	// actions are the action types (Deps.Actions).
	actions *pipeline.Registry
	// uploads tracks chunks of uploads in progress.
	uploads inflight
	// public limits anonymous submissions per client address.
	public publicLimiter
	// backups tracks online backups.
	backups *api.Backups
	// metrics are the HTTP metrics; gatherer serves /metrics.
	metrics  *httpMetrics
	gatherer prometheus.Gatherer
	// limitClass is the class of each route that needs no token ("METHOD
	// /path"; ratelimits.go); env.limits are the classes' rate limits.
	limitClass map[string]string
	// sched runs the daily jobs on the leader (scheduler.go).
	sched *Scheduler
	// intake is the shared create path of intake sources, watch the
	// poller of watched folders (leader only; intake.go).
	intake *intake.Intake
	watch  *intake.Watcher
	// davCreds caches WebDAV's checked Basic credentials (dav.go).
	davCreds davCreds
}

// New builds the server and its routes.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = 16 << 20
	}
	if d.Applier == nil {
		d.Applier = d.Store
	}
	// Every command a keyed request applies carries its key
	// (requestkeys.go).
	d.Applier = api.KeyedApplier{Applier: d.Applier}
	if d.Actions == nil {
		d.Actions = pipeline.Actions()
	}
	d.PublicURL = strings.TrimRight(d.PublicURL, "/")
	d.Timeouts = d.Timeouts.orDefault()
	if d.MaxConnsPerClient == 0 {
		d.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	s := &Server{deps: d, actions: d.Actions, Env: &api.Env{
		DB: d.Store, Applier: d.Applier, Auth: d.Auth, Log: d.Logger.With("component", "http"), Now: d.Now,
		PublicURL: d.PublicURL, MaxBodyBytes: d.MaxBodyBytes,
		Links: api.NewLinkHosts(d.PublicURL, d.LinksFromHost, d.ListenAddr, d.HostNames),
	}}
	s.RenderError = s.errorHandler
	s.vocabulary = &vocabulary.Handlers{Env: s.Env}
	s.certifyEnvelope = s.certifyWithSite
	if d.Pipeline != nil {
		s.dest = d.Pipeline
	}
	s.bg = newBackground(s)
	s.conns = newConnTracker(d.Timeouts, d.MaxConnsPerClient)
	s.moves = newFolderMoves(s)
	s.sched = s.newScheduler()
	s.backups = api.NewBackups()
	if d.Metrics == nil {
		d.Metrics = prometheus.NewRegistry()
	}
	s.metrics, s.gatherer = newHTTPMetrics(d.Metrics), d.Metrics
	s.Limits, s.limitClass = newLimits(d), map[string]string{}
	s.intake = s.newIntake(d.Metrics)
	s.watch = intake.NewWatcher(s.intake, d.IntakeFolderRoot, d.IntakePoll, d.Logger)
	if d.Indexer != nil {
		lag := api.GateLag
		if api.TestGateLag > 0 {
			lag = api.TestGateLag
		}
		s.Gate = api.NewIndexGate(d.Indexer, lag, api.GateMaxWait)
		s.Gate.Register(d.Metrics)
	}
	d.Metrics.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "quire_http_connections_refused_total",
		Help: "Connections closed at accept because their client address held limits.max_conns_per_client already.",
	}, func() float64 { return float64(s.conns.refused.Load()) }))
	s.app = fiber.New(fiber.Config{
		AppName:               "quire",
		DisableStartupMessage: true,
		ErrorHandler:          s.errorHandler,
		// Bodies are streamed: fasthttp reads at most 8 KiB of one before
		// the handler runs (authentication included); the rest is read
		// from RequestBodyStream. JSON handlers use ReadBody, which
		// enforces MaxBodyBytes itself.
		StreamRequestBody: true,
		BodyLimit:         4 << 20,
		// fasthttp would otherwise read a whole multipart/form-data body
		// (16 MiB in memory, the rest into temporary files) before any
		// handler, for anyone: Quire takes no multipart bodies.
		DisablePreParseMultipartForm: true,
		// ReadTimeout bounds the header; body reads and response writes
		// get progress deadlines from the connection (see Timeouts).
		ReadTimeout:    d.Timeouts.Header,
		IdleTimeout:    d.Timeouts.Idle,
		ReadBufferSize: 16 << 10,
		// Answers carry URLs (upload, download, short links): '&' must
		// stay '&', as FormKiQ's answers read, so that a URL pasted from a
		// response works (encoding/json would write \u0026).
		JSONEncoder: api.MarshalJSON,
		// WebDAV's methods (dav.go) besides HTTP's.
		RequestMethods: append(append([]string{}, fiber.DefaultMethods...), davExtraMethods...),
	})
	s.routes()
	s.routeTable = newRouteTable(s.app.GetRoutes(true))
	return s
}

// App exposes the fiber app (for app.Test in middleware tests).
func (s *Server) App() *fiber.App { return s.app }

// Listen serves on ln until Shutdown.
func (s *Server) Listen(ln net.Listener) error {
	s.bg.start()
	return s.app.Listener(s.conns.wrap(ln))
}

// Shutdown stops accepting connections, waits for in-flight requests and
// background work until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go guard.Do(s.Log, guard.HTTP, func() { s.conns.closeUnusedUntil(done) })
	// Backups can take an hour: stop them now rather than hold shutdown.
	s.backups.Shutdown()
	err := s.app.ShutdownWithContext(ctx)
	close(done)
	s.bg.stop()
	s.watch.Stop()
	s.sched.Stop()
	s.moves.close()
	return err
}
