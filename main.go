// Command quire is a self-hosted document management server, wire
// compatible with the FormKiQ HTTP API.
//
//	quire serve   --listen 127.0.0.1:8080 --data-dir ./data --public-url http://127.0.0.1:8080
//	quire token   --user U --groups g1,g2 [--data-dir D] [--ttl 1h]
//	quire version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/kardianos/service"

	"quire/auth"
	"quire/config"
	"quire/node"
	"quire/outbound"
	"quire/pipeline"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: quire <command> [flags]

commands:
  serve     run the server
  token     print a signed access token for a data dir
  config    print an example config file (example) or validate one (check)
  service   install|uninstall|start|stop|restart|status the OS service (systemd, Windows SCM)
  doctor    check the data dir, disk, store, engines, clock, TLS and config; print what to fix
  backup    write a backup archive of a running server (--url) or a stopped one (--data-dir)
  restore   unpack a backup archive into a new data dir
  reindex   rebuild the search index of a stopped server's data dir
  version   print the version

Run "quire <command> -h" for a command's flags.`)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = cmdServe(args[1:], stderr)
	case "token":
		err = cmdToken(args[1:], stdout, stderr)
	case "reindex":
		err = cmdReindex(args[1:], stderr)
	case "config":
		err = cmdConfig(args[1:], stdout, stderr)
	case "backup":
		err = cmdBackup(args[1:], stdout, stderr)
	case "restore":
		err = cmdRestore(args[1:], os.Stdin, stderr)
	case "service":
		err = cmdService(args[1:], stdout, stderr)
	case "doctor":
		err = cmdDoctor(args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "quire", node.Version)
	case "help", "-h", "--help":
		usage(stdout)
	default:
		fmt.Fprintf(stderr, "quire: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errUsage) {
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire:", err)
		return 1
	}
	return 0
}

// errUsage is a command line that names no known subcommand; the usage
// has been printed.
var errUsage = errors.New("usage")

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
func noneIfZero[T int | int64](n T) T {
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
		},
		TLS:            node.TLSConfig{CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile, SelfSigned: c.TLS.SelfSigned, Hosts: c.TLS.Hosts},
		MaxUploadBytes: c.Limits.MaxUploadBytes,
		MaxBodyBytes:   c.Limits.MaxBodyBytes,
		Logger:         log,

		MaxConnsPerClient: noneIfZero(c.Limits.MaxConnsPerClient),
		MinFreeBytes:      noneIfZero(c.Storage.MinFreeBytes),
		MinFreePercent:    float64(noneIfZero(c.Storage.MinFreePercent)),
		Outbound:          outboundPolicy(c),
		Pipeline: pipeline.Config{
			Workers:       c.Pipeline.Workers,
			ActionTimeout: c.Pipeline.ActionTimeout,
			RetryBase:     c.Pipeline.RetryBase,
			OCRMaxPages:   c.Pipeline.OCRMaxPages,
			Engines: pipeline.Engines{
				Tesseract: c.Engines.Tesseract,
				Ocrmypdf:  c.Engines.Ocrmypdf,
				Pdftotext: c.Engines.Pdftotext,
				Pdftoppm:  c.Engines.Pdftoppm,
				Soffice:   c.Engines.Soffice,
				Clamd:     c.Engines.Clamd,
				SMTP: pipeline.SMTPConfig{Host: c.SMTP.Host, Port: c.SMTP.Port, Security: c.SMTP.Security,
					Username: c.SMTP.Username, Password: c.SMTP.Password, From: c.SMTP.From},
				LLM:           pipeline.LLMConfig{URL: c.LLM.URL, ModelID: c.LLM.Model, APIKey: c.LLM.APIKey},
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

func cmdToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "username (required)")
	groups := fs.String("groups", "", "comma-separated groups, e.g. Admins or default,finance_read")
	ttl := fs.Duration("ttl", 0, "token lifetime (default: auth.token_ttl of the config, 1h)")
	issuer := fs.String("issuer", "", "token issuer (default quire)")
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	if *ttl == 0 {
		*ttl = l.Auth.TokenTTL
	}
	if *user == "" {
		return errors.New("token: --user is required")
	}
	var gs []string
	for _, g := range strings.Split(*groups, ",") {
		if g = strings.TrimSpace(g); g != "" {
			gs = append(gs, g)
		}
	}
	tok, err := auth.SignToken(l.DataDir, *issuer, *user, gs, *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}

func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}
