// Package node wires one Quire process together: storage, auth and the
// HTTP server, the index and the action pipeline (later the cluster). Open
// and Start build it in dependency order; Close tears it down in reverse.
package node

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quire/auth"
	"quire/certify"
	"quire/cluster"
	"quire/guard"
	"quire/index"
	"quire/outbound"
	"quire/pipeline"
	"quire/server"
	"quire/storage"
)

// Version is the Quire version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// Config configures a node.
type Config struct {
	// Listen is the HTTP listen address, e.g. 127.0.0.1:8080.
	Listen string
	// DataDir holds the database (db/) and keys (keys/).
	DataDir string
	// PublicURL is the base URL clients reach the server at; upload and
	// download URLs start with it. Default: http://<Listen>.
	PublicURL string
	// Auth configures external identity providers; DataDir is filled in.
	Auth auth.Config
	// MaxUploadBytes limits one upload (0: unlimited).
	MaxUploadBytes int64
	// Intake configures the scanner intake's watched folders.
	Intake IntakeConfig
	// IntakeSMTP configures scan to e-mail (Listen empty: off).
	IntakeSMTP IntakeSMTPConfig
	// MaxBodyBytes limits JSON request bodies (default 16 MiB).
	MaxBodyBytes int
	// PublicWebhooks takes webhook payloads without a token at
	// /public/webhooks/.
	PublicWebhooks bool
	// ESignatureEnv is the default environment of envelopes.
	ESignatureEnv string
	// TSA timestamps the PDF signatures Quire makes (no URL: none).
	TSA TSAConfig
	// Timeouts bound slow and idle clients (zero fields: the defaults;
	// tests shorten them).
	Timeouts server.Timeouts
	// MaxConnsPerClient caps concurrent connections from one client
	// address (0: server.DefaultMaxConnsPerClient; negative: unlimited).
	MaxConnsPerClient int
	// RateLimit is the rate-limit spec of each route class of the routes
	// that need no token (config's [ratelimit]; a class not named: its
	// default).
	RateLimit map[string]string
	// TLS serves HTTPS when set.
	TLS TLSConfig
	// Logger is the process logger.
	Logger *slog.Logger
	// Pipeline configures the action pipeline (workers, engines).
	Pipeline pipeline.Config
	// MinFreeBytes and MinFreePercent make the reserve of free space on
	// the data disk (storage.Config's fields: 0 the default, negative none).
	MinFreeBytes   int64
	MinFreePercent float64
	// IndexMergeIdle is how long the index must be quiet before it is
	// merged down (0: index.DefaultMergeIdle; negative: never).
	IndexMergeIdle time.Duration
	// DiskCheckEvery is how often free space is looked at (0: 1 s).
	DiskCheckEvery time.Duration
	// Outbound is the policy for calls to destinations users choose
	// (nil: the default policy, which refuses loopback and link-local).
	Outbound *outbound.Policy
	// Cluster makes the node a Raft cluster member (zero: a single
	// server).
	Cluster ClusterConfig
	// MetricsListen serves /metrics on a listener of its own (plain
	// HTTP), and the API listener no longer does (metrics.listen).
	MetricsListen string
	// MetricsToken is the bearer token scrapes must send (metrics.token).
	MetricsToken string
}

// Node is one running Quire process.
type Node struct {
	cfg      Config
	tlsLeaf  *x509.Certificate // the listener's certificate (nil: HTTP)
	tsa      *certify.TSA      // nil: signatures are not timestamped
	DB       *storage.DB
	Index    *index.Index
	Indexer  *index.Indexer
	Auth     *auth.Authenticator
	Server   *server.Server // built by Start
	Pipeline *pipeline.Pipeline
	// Cluster is the node's Raft member (nil: a single server).
	Cluster *cluster.Node
	applier storage.Applier // the store, or the cluster member
	leader  *leaderLoop     // runs the schedulers while this node leads
	// proposeSeconds is the histogram of Propose times (a cluster member).
	proposeSeconds prometheus.Histogram
	fwdSrv         *http.Server // the leader's side of write forwarding
	ln             net.Listener
	metricsSrv     *http.Server // metrics.listen's server (nil: none)
	metricsLn      net.Listener
	smtp           *server.SMTPIntake // intake_smtp's listener (nil: none)
	smtpTLSConf    *tls.Config        // its STARTTLS (nil: none)
	smtpLeaf       *x509.Certificate  // its STARTTLS certificate (nil: none)
	smtpLn         net.Listener
	metrics        *prometheus.Registry
	collector      *collector // stops its background count at close
	errc           chan error
	// closeOnce makes Close idempotent: a second Close (a test's cleanup
	// after its own Close) must not reach a closed store.
	closeOnce sync.Once
	closeErr  error

	// clusterID is the member's TLS identity; join admits nodes (join.go).
	clusterID *cluster.Identity
	join      joinState
	// raftUnreadable is why the member's Raft state could not be read
	// at start: the node then runs without Raft (raftstate.go).
	raftUnreadable string
	// promoteStop ends promoteWhenCaughtUp; promoteChecks counts its
	// looks (tests).
	promoteStop   chan struct{}
	promoteChecks atomic.Int64
	verifyCount   atomic.Int64 // verifications this node made (verify.go)
}

// Open opens the store, keys and index and builds the pipeline; Start
// builds the server once its address, and so its public URL, is known.
func Open(cfg Config) (*Node, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("data dir is required")
	}
	// Everything below the data dir is addressed by absolute paths: the
	// engines run in scratch directories of their own, where a relative
	// path (make run's --data-dir ./data) names nothing (issue 46).
	abs, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", cfg.DataDir, err)
	}
	cfg.DataDir = abs
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	tsa, err := cfg.TSA.open()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	db, err := storage.Open(storage.Config{Dir: filepath.Join(cfg.DataDir, "db"), Logger: cfg.Logger,
		MinFreeBytes: cfg.MinFreeBytes, MinFreePercent: cfg.MinFreePercent, DiskCheckEvery: cfg.DiskCheckEvery})
	if err != nil {
		return nil, err
	}
	ac := cfg.Auth
	ac.DataDir = cfg.DataDir
	ac.Directory = directory{db}
	a, err := auth.Open(ac, apiKeys{db})
	if err != nil {
		db.Close()
		return nil, err
	}
	x, err := index.Open(filepath.Join(cfg.DataDir, "index"))
	if err != nil {
		db.Close()
		return nil, err
	}
	n := &Node{cfg: cfg, tsa: tsa, DB: db, Index: x, Auth: a, applier: db, errc: make(chan error, 1)}
	if err := n.useKeyRing(); err != nil {
		x.Close()
		db.Close()
		return nil, fmt.Errorf("signing keys: %w", err)
	}
	n.watchKeyRing()
	if err := n.useSecretsKey(); err != nil {
		// Secrets then fail to open with a message; the rest works.
		cfg.Logger.Error("rotated secrets key not installed", "err", err)
	}
	n.watchSecretsKey()
	n.Indexer = index.NewIndexer(db, x, cfg.Logger)
	if cfg.IndexMergeIdle != 0 {
		n.Indexer.SetMergeIdle(max(cfg.IndexMergeIdle, 0))
	}
	if !cfg.Cluster.Enabled() {
		// In a cluster the sweep must be a leader's command (next slice).
		n.sweep()
	}
	// The index catches up with storage before the node serves: documents
	// written before a crash are findable once requests are answered.
	if err := n.Indexer.Start(context.Background()); err != nil {
		n.Indexer.Close()
		x.Close()
		db.Close()
		return nil, fmt.Errorf("index catch-up: %w", err)
	}
	if cfg.Cluster.Enabled() {
		if err := n.openCluster(); err != nil {
			n.Indexer.Close()
			x.Close()
			db.Close()
			return nil, err
		}
	}
	// The registry is made before the pipeline, as its collector describes
	// itself by collecting once and must not count documents then.
	n.metrics, n.collector = newRegistry(n)
	pc := cfg.Pipeline
	if pc.Logger == nil {
		pc.Logger = cfg.Logger
	}
	if pc.TempDir == "" {
		pc.TempDir = filepath.Join(cfg.DataDir, "tmp")
		// Scratch files of actions a crash interrupted are of no use.
		os.RemoveAll(pc.TempDir)
		if err := os.MkdirAll(pc.TempDir, 0o700); err != nil {
			n.closeCluster()
			n.Indexer.Close()
			x.Close()
			db.Close()
			return nil, fmt.Errorf("create temp dir: %w", err)
		}
	}
	pc.Outbound = cfg.Outbound
	pc.Describe = server.DocumentJSON
	// Signed download URLs need the public URL, known once Start has a
	// listener and builds the server; actions run only after that.
	pc.DownloadURL = func(site, doc string, valid time.Duration) string {
		return n.Server.DownloadURL(site, doc, valid)
	}
	n.Pipeline = pipeline.New(db, n.applier, pc)
	return n, nil
}

// testWrapApplier, when set (export_test.go), wraps the applier the
// server is given: tests make a write's outcome unknown after it applied.
var testWrapApplier func(storage.Applier) storage.Applier

// newServer builds the HTTP server once the public URL is known.
func (n *Node) newServer(publicURL string) *server.Server {
	cfg := n.cfg
	app := n.applier
	if testWrapApplier != nil {
		app = testWrapApplier(app)
	}
	return server.New(server.Deps{
		Metrics:          n.metrics,
		Store:            n.DB,
		Index:            n.Index,
		Indexer:          n.Indexer,
		Applier:          app,
		Cluster:          n.clusterInfo(),
		Auth:             n.Auth,
		PublicURL:        publicURL,
		LinksFromHost:    cfg.PublicURL == "",
		ListenAddr:       n.ln.Addr().String(),
		HostNames:        cfg.TLS.Hosts,
		Pipeline:         n.Pipeline,
		Actions:          pipeline.Actions(),
		Logger:           cfg.Logger,
		Version:          Version,
		MaxUploadBytes:   cfg.MaxUploadBytes,
		MaxBodyBytes:     cfg.MaxBodyBytes,
		IntakeFolderRoot: cfg.Intake.FolderRoot,
		IntakePoll:       cfg.Intake.Poll,
		PublicWebhooks:   cfg.PublicWebhooks,
		ESignatureEnv:    cfg.ESignatureEnv,
		TSA:              n.tsa,
		DataDir:          cfg.DataDir,
		TLSCertificate:   n.tlsLeaf,
		SMTPCertificate:  n.smtpLeaf,
		ClusterTLS:       n.clusterID,
		SecretsWrapKey:   n.secretsWrapKey,

		RequireModelAgreement: cfg.Pipeline.Engines.LLM.RequireAgreement,
		Timeouts:              cfg.Timeouts,

		MaxConnsPerClient: cfg.MaxConnsPerClient,
		MetricsToken:      cfg.MetricsToken,
		MetricsElsewhere:  cfg.MetricsListen != "",
		RateLimit:         cfg.RateLimit,
	})
}

// reachableAddr replaces a wildcard listener's address (0.0.0.0, [::])
// with this machine's first LAN address (IPv4 first), the base of links
// made outside a request (mails, webhook payloads) when no public URL is
// set; without one, the loopback address.
func reachableAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return addr
	}
	var v6 net.IP
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return net.JoinHostPort(n.IP.String(), port)
		}
		if v6 == nil {
			v6 = n.IP
		}
	}
	if v6 != nil {
		return net.JoinHostPort(v6.String(), port)
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// startMetrics serves /metrics on metrics.listen, when set.
func (n *Node) startMetrics() error {
	if n.cfg.MetricsListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", n.cfg.MetricsListen)
	if err != nil {
		return fmt.Errorf("metrics listener %s: %w", n.cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", n.Server.MetricsHTTP())
	n.metricsLn = ln
	n.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	n.cfg.Logger.Info("serving metrics", "listen", ln.Addr().String(), "token", n.cfg.MetricsToken != "")
	go guard.Run(n.cfg.Logger, guard.HTTP, func() error {
		if err := n.metricsSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.cfg.Logger.Error("metrics listener stopped", "err", err)
		}
		return nil
	})
	return nil
}

// MetricsAddr is the metrics listener's address ("" without one).
func (n *Node) MetricsAddr() string {
	if n.metricsLn == nil {
		return ""
	}
	return n.metricsLn.Addr().String()
}

// sweep removes content chunks that uploads interrupted by a crash left
// behind. No upload can be in flight yet.
func (n *Node) sweep() {
	for i := 0; i < 100; i++ {
		shas, err := n.DB.UnreferencedChunks(1000)
		if err != nil || len(shas) == 0 {
			return
		}
		cmd := storage.MustCommand(storage.OpSweepChunks, "", "", time.Now(), storage.SweepChunks{SHAs: shas})
		if _, err := n.DB.Apply(context.Background(), cmd); err != nil {
			n.cfg.Logger.Warn("sweep unreferenced chunks", "err", err)
			return
		}
		n.cfg.Logger.Info("swept chunks of interrupted uploads", "count", len(shas))
	}
}

// Start listens on cfg.Listen (or ln when not nil), builds the server
// (its public URL defaults to the bound address) and serves in the
// background. Addr reports the bound address.
func (n *Node) Start(ln net.Listener) error {
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", n.cfg.Listen)
		if err != nil {
			return fmt.Errorf("listen %s: %w", n.cfg.Listen, err)
		}
	}
	scheme := "http://"
	if n.cfg.TLS.Enabled() {
		tc, fp, err := loadTLS(n.cfg.TLS, n.cfg.DataDir, ln.Addr().String())
		if err != nil {
			ln.Close()
			return err
		}
		n.cfg.Logger.Info("serving HTTPS", "certificateSHA256", fp)
		if leaf, err := x509.ParseCertificate(tc.Certificates[0].Certificate[0]); err == nil {
			n.tlsLeaf = leaf
		}
		ln = tls.NewListener(ln, n.withJoinTLS(tc))
		scheme = "https://"
	}
	n.ln = ln
	publicURL := n.cfg.PublicURL
	if publicURL == "" {
		publicURL = scheme + reachableAddr(ln.Addr().String())
		if publicURL != scheme+ln.Addr().String() {
			n.cfg.Logger.Warn("no public_url set and the listener takes every address: links in answers use the request's Host (when it names this machine) or the address the client connected to; mailed links use "+publicURL, "listen", ln.Addr().String())
		}
	}
	if err := n.smtpTLS(); err != nil {
		ln.Close()
		return err
	}
	n.Server = n.newServer(publicURL)
	if err := n.startMetrics(); err != nil {
		ln.Close()
		return err
	}
	if err := n.startSMTP(); err != nil {
		ln.Close()
		if n.metricsSrv != nil {
			n.metricsSrv.Close()
		}
		return err
	}
	// The schedulers (pipeline, retention, folder moves, chunk sweep)
	// run while this node leads: always on a single server, which starts
	// them here, before it serves.
	src := leaderSource(alwaysLeader)
	switch {
	case n.Cluster != nil:
		src = n.Cluster.Leadership
	case n.raftUnreadable != "":
		src = neverLeader
	}
	n.leader = newLeaderLoop(n, src)
	if err := n.leader.start(); err != nil {
		return err
	}
	go func() {
		err := guard.Run(n.cfg.Logger, guard.HTTP, func() error { return n.Server.Listen(ln) })
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			n.errc <- err
		}
		close(n.errc)
	}()
	return nil
}

// Addr is the address the node listens on.
func (n *Node) Addr() string { return n.ln.Addr().String() }

// Done reports a serve error, or closes when serving stops.
func (n *Node) Done() <-chan error { return n.errc }

// Close shuts the server down gracefully (in-flight requests finish until
// ctx ends) and closes the store. Later calls return the first's result.
func (n *Node) Close(ctx context.Context) error {
	n.closeOnce.Do(func() { n.closeErr = n.close(ctx) })
	return n.closeErr
}

func (n *Node) close(ctx context.Context) error {
	var errs []error
	if n.leader != nil {
		n.leader.close()
	}
	// Stop accepting first, so clients learn early, and let in-flight
	// requests finish; then the pipeline's running actions.
	if n.Server != nil && n.ln != nil {
		errs = append(errs, n.Server.Shutdown(ctx))
	}
	if n.metricsSrv != nil {
		n.metricsSrv.Close()
	}
	if n.smtp != nil {
		n.smtp.Close()
	}
	if n.Pipeline != nil {
		// Running actions get until ctx ends; one cut short runs again at
		// the next start.
		if err := n.Pipeline.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, n.closeCluster())
	errs = append(errs, n.Indexer.Close(), n.Index.Close())
	if n.collector != nil {
		n.collector.close()
	}
	errs = append(errs, n.DB.Close())
	return errors.Join(errs...)
}

// apiKeys adapts storage to auth.APIKeyStore.
type apiKeys struct{ db *storage.DB }

func (k apiKeys) LookupAPIKey(hash string) (auth.APIKey, error) {
	rec, err := k.db.LookupAPIKey(hash)
	if errors.Is(err, storage.ErrNotFound) {
		return auth.APIKey{}, auth.ErrNoAPIKey
	}
	if err != nil {
		return auth.APIKey{}, err
	}
	perms := make([]auth.Permission, len(rec.Permissions))
	for i, p := range rec.Permissions {
		perms[i] = auth.Permission(p)
	}
	return auth.APIKey{Name: rec.Name, Site: rec.SiteID, UserID: rec.UserID, Permissions: perms, Groups: rec.Groups}, nil
}

// directory adapts storage's user directory to auth.Directory.
type directory struct{ db *storage.DB }

func (d directory) UserGeneration(name string) (int, bool, error) {
	u, err := d.db.GetUser(name)
	if err != nil {
		return 0, false, err
	}
	return u.Generation, u.Enabled, nil
}

// IntakeConfig is where the scanner intake's watched folders live
// (<FolderRoot>/<siteId>/<profile>; empty: none) and how often the
// leader polls them (0: 2s).
type IntakeConfig struct {
	FolderRoot string
	Poll       time.Duration
}
