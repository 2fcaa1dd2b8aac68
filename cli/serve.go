package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/kardianos/service"

	"quire/auth"
	"quire/config"
	"quire/node"
	"quire/outbound"
	"quire/pipeline"
	"quire/pipeline/llmchat"
	"quire/pipeline/mailer"
)

// cmdServe runs the server until SIGINT or SIGTERM, or under the Windows
// service control manager when started by it.
func cmdServe(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args, config.Options{})
	if err != nil {
		return err
	}
	if runtime.GOOS == "windows" && !service.Interactive() {
		return runAsService(l)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(stop)
	return serve(l, stderr, stop)
}

// serve runs a server until stop delivers (a signal, or the service
// manager's stop) or serving fails, then shuts down gracefully.
func serve(l *config.Loaded, stderr io.Writer, stop <-chan os.Signal) error {
	c := l.Config
	log := newLogger(stderr, c.Log.Level, c.Log.Format)
	// A soft heap limit keeps an idle-looking appliance small: without it
	// the heap grows to twice its live size between collections.
	if os.Getenv("GOMEMLIMIT") == "" && c.Limits.MemoryLimitMiB > 0 {
		debug.SetMemoryLimit(c.Limits.MemoryLimitMiB << 20)
	}
	if addr := os.Getenv("QUIRE_PPROF"); addr != "" {
		// Profiling for support sessions, on an address of the operator's
		// choosing (keep it on loopback); never on the API listener.
		go func() { log.Warn("pprof stopped", "err", http.ListenAndServe(addr, nil)) }()
	}
	n, err := node.Open(nodeConfig(c, log))
	if err != nil {
		return err
	}
	if err := n.Start(nil); err != nil {
		n.Close(context.Background())
		return err
	}
	log.Info("quire serving", "listen", n.Addr(), "dataDir", c.DataDir, "publicURL", c.BaseURL(), "config", l.File, "version", node.Version)
	var serveErr error
	select {
	case s := <-stop:
		log.Info("shutting down", "signal", s.String())
	case serveErr = <-n.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = errors.Join(serveErr, n.Close(ctx))
	log.Info("stopped", "err", err)
	return err
}

// noneIfZero maps a setting's 0 ("none": unlimited, no reserve) to the
// node's -1, whose 0 means "the default".
func noneIfZero[T int | int64 | time.Duration](n T) T {
	if n == 0 {
		return -1
	}
	return n
}

// shutdownGrace is how long in-flight requests and running actions get
// to finish at shutdown; systemd's TimeoutStopSec is longer.
const shutdownGrace = 30 * time.Second

// nodeConfig turns the configuration into the node's.
func nodeConfig(c *config.Config, log *slog.Logger) node.Config {
	return node.Config{
		Listen:    c.Listen,
		DataDir:   c.DataDir,
		PublicURL: c.PublicURL,
		Auth: auth.Config{
			JWKSFile:       c.Auth.JWKSFile,
			PEMFile:        c.Auth.PEMFile,
			ExternalIssuer: c.Auth.Issuer,
			Audience:       c.Auth.Audience,
			GroupsClaim:    c.Auth.GroupsClaim,
			UsernameClaim:  c.Auth.UsernameClaim,
			AccessTTL:      c.Auth.AccessTokenTTL,
			RefreshTTL:     c.Auth.RefreshTokenTTL,
			IdleTimeout:    c.Auth.ConsoleIdleTimeout,
			OIDC: auth.OIDCConfig{AuthorizationURL: c.Auth.OIDCAuthorizationURL, TokenURL: c.Auth.OIDCTokenURL,
				ClientID: c.Auth.OIDCClientID, ClientSecretFile: c.Auth.OIDCClientSecretFile,
				Scopes: c.Auth.OIDCScopes, DisplayName: c.Auth.OIDCDisplayName},
		},
		TLS:            node.TLSConfig{CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile, SelfSigned: c.TLS.SelfSigned, Hosts: c.TLS.Hosts},
		MaxUploadBytes: c.Limits.MaxUploadBytes,
		MaxBodyBytes:   c.Limits.MaxBodyBytes,
		Intake:         node.IntakeConfig{FolderRoot: c.Intake.FolderRoot, Poll: c.Intake.Poll},
		IntakeSMTP: node.IntakeSMTPConfig{Listen: c.IntakeSMTP.Listen, Domain: c.IntakeSMTP.Domain, MaxMessageBytes: c.IntakeSMTP.MaxMessageBytes,
			MaxAttachments: c.IntakeSMTP.MaxAttachments, CertFile: c.IntakeSMTP.CertFile, KeyFile: c.IntakeSMTP.KeyFile},
		PublicWebhooks: c.Webhooks.Public,
		ESignatureEnv:  c.ESignature.Environment,
		TSA:            node.TSAConfig{URL: c.Certify.TSAURL, CAFile: c.Certify.TSACAFile},
		Logger:         log,

		MaxConnsPerClient: noneIfZero(c.Limits.MaxConnsPerClient),
		RateLimit:         c.RateLimit,
		MinFreeBytes:      noneIfZero(c.Storage.MinFreeBytes),
		IndexMergeIdle:    noneIfZero(c.Index.MergeIdle),
		MinFreePercent:    float64(noneIfZero(c.Storage.MinFreePercent)),
		Outbound:          outboundPolicy(c),
		MetricsListen:     c.Metrics.Listen,
		MetricsToken:      c.Metrics.Token,
		Cluster: node.ClusterConfig{NodeID: c.Cluster.NodeID, RaftListen: c.Cluster.RaftListen, Bootstrap: c.Cluster.Bootstrap,
			Join: c.Cluster.Join, JoinToken: c.Cluster.JoinToken, VerifyEvery: noneIfZero(c.Cluster.VerifyInterval)},
		Pipeline: pipeline.Config{
			Workers:        c.Pipeline.Workers,
			ActionTimeout:  c.Pipeline.ActionTimeout,
			RetryBase:      c.Pipeline.RetryBase,
			OCRMaxPages:    c.Pipeline.OCRMaxPages,
			OCRPageTimeout: c.Pipeline.OCRPageTimeout,
			Engines: pipeline.Engines{
				Tesseract: c.Engines.Tesseract,
				Ocrmypdf:  c.Engines.Ocrmypdf,
				Pdftotext: c.Engines.Pdftotext,
				Pdftoppm:  c.Engines.Pdftoppm,
				Soffice:   c.Engines.Soffice,
				Clamd:     c.Engines.Clamd,
				SMTP: mailer.Config{Host: c.SMTP.Host, Port: c.SMTP.Port, Security: c.SMTP.Security, CAFile: c.SMTP.CAFile,
					Username: c.SMTP.Username, Password: c.SMTP.Password, From: c.SMTP.From},
				LLM:           llmchat.Config{URL: c.LLM.URL, ModelID: c.LLM.Model, APIKey: c.LLM.APIKey, RequireAgreement: c.LLM.RequireAgreement},
				EventBuses:    c.EventBuses,
				WebhookSecret: c.Webhooks.Secret,
			},
		},
	}
}

// outboundPolicy is the configured outbound policy; Load validated it,
// and a policy that does not build falls back to the default, which is
// the strictest.
func outboundPolicy(c *config.Config) *outbound.Policy {
	p, err := outbound.New(c.Outbound.Allow, c.Outbound.Deny)
	if err != nil {
		return nil
	}
	return p
}
