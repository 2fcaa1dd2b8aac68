// Package cli holds the quire commands, one file per command: serve.go,
// token.go, user.go, config.go, service.go, doctor.go, backup.go, restore.go,
// reindex.go and cluster*.go (quire cluster), with progress.go for the progress lines of backup, restore
// and reindex. Main dispatches a command line to them; the package main
// at the repository root only calls Main.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"quire/node"
)

func usage(w io.Writer) {
	fmt.Fprintln(w, `usage: quire <command> [flags]

commands:
  serve     run the server
  token     print a signed access token for a data dir
  user      add|passwd|disable|enable a user of the built-in directory (through the running server)
  secrets   list|add|delete a site's certificates (through the running server)
  config    print an example config file (example) or validate one (check)
  service   install|uninstall|start|stop|restart|status the OS service (systemd, Windows SCM)
  doctor    check the data dir, disk, store, engines, clock, TLS and config; print what to fix
  backup    write a backup archive of a running server (--url) or a stopped one (--data-dir)
  restore   unpack a backup archive into a new data dir
  reindex   rebuild the search index of a stopped server's data dir
  cluster   token|status|join|leave|remove|rejoin: form and run a cluster of Quire nodes
  version   print the version

Run "quire <command> -h" for a command's flags.`)
}

// Main runs the command line args (without the program name) and returns
// the exit code: 0 on success or -h, 1 when the command failed, 2 for a
// command line that names no known command.
func Main(args []string, stdout, stderr io.Writer) int {
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
	case "user":
		err = cmdUser(args[1:], stdout, stderr)
	case "secrets":
		err = cmdSecrets(args[1:], stdout, stderr)
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
	case "cluster":
		err = cmdCluster(args[1:], stdout, stderr)
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
