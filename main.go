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
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"quire/auth"
	"quire/node"
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
	if err != nil {
		fmt.Fprintln(stderr, "quire:", err)
		return 1
	}
	return 0
}

func cmdServe(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "HTTP listen address")
	dataDir := fs.String("data-dir", "./data", "data directory (database and keys)")
	publicURL := fs.String("public-url", "", "base URL clients use to reach this server (default http://<listen>)")
	jwks := fs.String("jwks-file", "", "JWKS file of an external identity provider")
	pem := fs.String("jwt-pem", "", "PEM public key of an external identity provider")
	extIss := fs.String("jwt-issuer", "", "issuer (iss) required in external tokens")
	aud := fs.String("jwt-audience", "", "audience (aud) required in external tokens")
	groups := fs.String("groups-claim", "", "token claim holding groups (default cognito:groups)")
	userClaim := fs.String("username-claim", "", "token claim holding the username (default cognito:username)")
	maxUpload := fs.Int64("max-upload-bytes", 0, "largest accepted upload in bytes (0: unlimited)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	memLimit := fs.Int64("memory-limit-mib", 80, "soft limit for the Go heap in MiB, raised by 64 MiB while a search index batch is built (0: none; GOMEMLIMIT wins when set)")
	workers := fs.Int("pipeline-workers", 4, "actions run at once")
	clamd := fs.String("clamd", "unix:/run/clamav/clamd.ctl", "clamd address for ANTIVIRUS/MALWARE_SCAN: unix:/path or tcp:host:port")
	smtpHost := fs.String("smtp-host", "", "default mail server for NOTIFICATION actions (a site's notification settings win)")
	smtpPort := fs.Int("smtp-port", 25, "mail server port")
	smtpSec := fs.String("smtp-security", "", "mail server connection security: STARTTLS, IMPLICIT_TLS or empty for none")
	smtpUser := fs.String("smtp-username", "", "mail server user (the password comes from QUIRE_SMTP_PASSWORD)")
	smtpFrom := fs.String("smtp-from", "", "default sender address (a site's notification email wins)")
	llmURL := fs.String("llm-url", "", "default OpenAI-compatible endpoint for LLM actions, e.g. http://127.0.0.1:11434/v1 (key from QUIRE_LLM_API_KEY)")
	llmModel := fs.String("llm-model", "", "default model of LLM actions")
	var buses eventBuses
	fs.Var(&buses, "event-bus", "name=url of an event bus for EVENTBRIDGE actions (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := newLogger(stderr, *logLevel, *logFormat)
	// A soft heap limit keeps an idle-looking appliance small: without it
	// the heap grows to twice its live size between collections.
	if os.Getenv("GOMEMLIMIT") == "" && *memLimit > 0 {
		debug.SetMemoryLimit(*memLimit << 20)
	}
	if addr := os.Getenv("QUIRE_PPROF"); addr != "" {
		// Profiling for support sessions, on an address of the operator's
		// choosing (keep it on loopback); never on the API listener.
		go func() { log.Warn("pprof stopped", "err", http.ListenAndServe(addr, nil)) }()
	}
	pub := *publicURL
	if pub == "" {
		pub = "http://" + *listen
	}
	n, err := node.Open(node.Config{
		Listen:    *listen,
		DataDir:   *dataDir,
		PublicURL: pub,
		Auth: auth.Config{
			JWKSFile:       *jwks,
			PEMFile:        *pem,
			ExternalIssuer: *extIss,
			Audience:       *aud,
			GroupsClaim:    *groups,
			UsernameClaim:  *userClaim,
		},
		MaxUploadBytes: *maxUpload,
		Logger:         log,
		Pipeline: pipeline.Config{
			Workers: *workers,
			Engines: pipeline.Engines{
				Clamd: *clamd,
				SMTP: pipeline.SMTPConfig{Host: *smtpHost, Port: *smtpPort, Security: *smtpSec, Username: *smtpUser,
					Password: os.Getenv("QUIRE_SMTP_PASSWORD"), From: *smtpFrom},
				LLM:           pipeline.LLMConfig{URL: *llmURL, ModelID: *llmModel, APIKey: os.Getenv("QUIRE_LLM_API_KEY")},
				EventBuses:    buses,
				WebhookSecret: os.Getenv("QUIRE_WEBHOOK_SECRET"),
			},
		},
	})
	if err != nil {
		return err
	}
	if err := n.Start(nil); err != nil {
		n.Close(context.Background())
		return err
	}
	log.Info("quire serving", "listen", n.Addr(), "dataDir", *dataDir, "publicURL", pub, "version", node.Version)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var serveErr error
	select {
	case s := <-sig:
		log.Info("shutting down", "signal", s.String())
	case serveErr = <-n.Done():
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(serveErr, n.Close(ctx))
}

func cmdToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	user := fs.String("user", "", "username (required)")
	groups := fs.String("groups", "", "comma-separated groups, e.g. Admins or default,finance_read")
	dataDir := fs.String("data-dir", "./data", "data directory of the server")
	ttl := fs.Duration("ttl", time.Hour, "token lifetime")
	issuer := fs.String("issuer", "", "token issuer (default quire)")
	if err := fs.Parse(args); err != nil {
		return err
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
	tok, err := auth.SignToken(*dataDir, *issuer, *user, gs, *ttl)
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

// eventBuses collects --event-bus name=url flags.
type eventBuses map[string]string

func (b *eventBuses) String() string { return fmt.Sprint(map[string]string(*b)) }

func (b *eventBuses) Set(v string) error {
	name, url, ok := strings.Cut(v, "=")
	if !ok || name == "" || !(strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://")) {
		return fmt.Errorf("want name=http(s)://url, got %q", v)
	}
	if *b == nil {
		*b = eventBuses{}
	}
	(*b)[name] = url
	return nil
}
