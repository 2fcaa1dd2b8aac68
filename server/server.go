package server

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"quire/guard"
	qintake "quire/intake"
	"quire/pipeline"
	"quire/server/admin"
	"quire/server/content"
	"quire/server/dav"
	"quire/server/directory"
	"quire/server/documents"
	"quire/server/flow"
	"quire/server/intake"
	"quire/server/internal/api"
	"quire/server/search"
	"quire/server/signatures"
	"quire/server/vocabulary"
	"quire/storage"
)

// DocumentJSON renders a stored document with FormKiQ's read fields.
// DocumentJSON renders a document as GET /documents/{id} does (webhook
// bodies use it too).
func DocumentJSON(d *storage.Document) map[string]any { return api.DocumentJSON(d) }

// Server is Quire's HTTP API.
type Server struct {
	app *fiber.App
	// routeTable matches requests to routes for the Idempotency-Key
	// check (requestkeys.go).
	routeTable *routeTable
	// env is what the request API shares with every handler (env.go).
	*api.Env
	// The domains' handlers, each on the shared Env.
	vocabulary *vocabulary.Handlers
	directory  *directory.Handlers
	content    *content.Handlers
	signatures *signatures.Handlers
	documents  *documents.Handlers
	search     *search.Handlers
	flow       *flow.Handlers
	intake     *intake.Handlers
	dav        *dav.Handlers
	admin      *admin.Handlers
	bg         *background
	// conns lets Shutdown close connections that never sent a request.
	conns *connTracker
	// actions are the action types (Deps.Actions).
	actions *pipeline.Registry
	// metrics are the HTTP metrics; gatherer serves /metrics.
	metrics  *httpMetrics
	gatherer prometheus.Gatherer
	// limitClass is the class of each route that needs no token ("METHOD
	// /path"; ratelimits.go); env.limits are the classes' rate limits.
	limitClass map[string]string
	// rows are the route table's rows by "METHOD path" (routes.go).
	rows map[string]*route
	// sched runs the daily jobs on the leader (scheduler.go).
	sched *Scheduler
}

// New builds the server and its routes.
func New(d api.Deps) *Server {
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
	d.Timeouts = d.Timeouts.OrDefault()
	if d.MaxConnsPerClient == 0 {
		d.MaxConnsPerClient = DefaultMaxConnsPerClient
	}
	s := &Server{actions: d.Actions, Env: &api.Env{
		Deps: d, DB: d.Store, Log: d.Logger.With("component", "http"), Now: d.Now,
		Links: api.NewLinkHosts(d.PublicURL, d.LinksFromHost, d.ListenAddr, d.HostNames),
	}}
	s.RenderError = s.errorHandler
	s.vocabulary = &vocabulary.Handlers{Env: s.Env}
	s.directory = &directory.Handlers{Env: s.Env}
	if d.Pipeline != nil {
		s.Dest = d.Pipeline
	}
	s.bg = newBackground(s)
	s.content = &content.Handlers{Env: s.Env, Detect: s.bg.detect}
	s.documents = &documents.Handlers{Env: s.Env, Content: s.content,
		RateLimited: func(route string) { s.metrics.ratelimited.WithLabelValues(route).Inc() }}
	s.flow = &flow.Handlers{Env: s.Env, Documents: s.documents}
	s.signatures = &signatures.Handlers{Env: s.Env, Content: s.content}
	s.signatures.CertifyEnvelope = s.signatures.CertifyWithSite
	s.conns = newConnTracker(d.Timeouts, d.MaxConnsPerClient)
	s.search = &search.Handlers{Env: s.Env}
	s.search.Moves = search.NewFolderMoves(s.search)
	s.sched = s.newScheduler()
	s.Backups = api.NewBackups()
	if d.Metrics == nil {
		d.Metrics = prometheus.NewRegistry()
	}
	s.metrics, s.gatherer = newHTTPMetrics(d.Metrics), d.Metrics
	s.Limits, s.limitClass = newLimits(d), map[string]string{}
	s.intake = &intake.Handlers{Env: s.Env, Content: s.content, Documents: s.documents}
	s.intake.Intake = s.intake.NewIntake(d.Metrics)
	s.intake.Watch = qintake.NewWatcher(s.intake.Intake, d.IntakeFolderRoot, d.IntakePoll, d.Logger)
	s.admin = &admin.Handlers{Env: s.Env, Content: s.content, Leads: s.bg.leader.Load, SweepRetention: s.bg.sweepRetention}
	s.dav = &dav.Handlers{Env: s.Env, Content: s.content, Documents: s.documents, Search: s.search, Intake: s.intake}
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
		// WebDAV's methods (server/dav) besides HTTP's.
		RequestMethods: append(append([]string{}, fiber.DefaultMethods...), dav.ExtraMethods...),
	})
	s.routes()
	s.routeTable = newRouteTable(s.app.GetRoutes(true), s.rows)
	return s
}

// Intake is the server's intake (for other sources: SMTP, WebDAV).
func (s *Server) Intake() *qintake.Intake { return s.intake.Intake }

// NewSMTPIntake builds the scan-to-e-mail listener; Serve runs it.
func (s *Server) NewSMTPIntake(cfg SMTPConfig) *SMTPIntake { return s.intake.NewSMTPIntake(cfg) }

// SMTPConfig configures the scan-to-e-mail listener; SMTPIntake is a
// running one (server/intake; node starts it).
type (
	SMTPConfig = intake.SMTPConfig
	SMTPIntake = intake.SMTPIntake
)

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
	s.Backups.Shutdown()
	err := s.app.ShutdownWithContext(ctx)
	close(done)
	s.bg.stop()
	s.intake.Watch.Stop()
	s.sched.Stop()
	s.search.Moves.Shutdown()
	return err
}
