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
	"slices"
	"strings"

	"quire/node"
	"quire/storage"
)

// command is one quire command: the registry below is the one list of
// them, so the usage, the dispatch and the help test cannot drift.
type command struct {
	name    string
	summary string
	// subs are the subcommands, for a command that has them: "quire NAME"
	// alone prints the command's usage (exit 2), "quire NAME -h" prints
	// it on stdout (exit 0).
	subs []subcommand
	run  func(args []string, stdout, stderr io.Writer) error
}

// subcommand is one of a command's subcommands.
type subcommand struct{ name, summary string }

func subNames(subs []subcommand) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.name
	}
	return out
}

// commands lists every command in the order the usage shows them.
var commands = []command{
	{name: "serve", summary: "run the server",
		run: func(a []string, _, stderr io.Writer) error { return cmdServe(a, stderr) }},
	{name: "token", summary: "print a signed access token for a data dir", run: cmdToken},
	{name: "user", summary: "manage the built-in directory's users (through the running server)",
		subs: []subcommand{
			{"add", "add USER [--groups G1,G2] [--password P]: a user with a temporary password (printed, or mailed), in those groups"},
			{"passwd", "passwd USER [--password P]: a new temporary password, to be changed at the next sign-in"},
			{"disable", "disable USER: the user can no longer sign in"},
			{"enable", "enable USER: the user can sign in again"},
		}, run: cmdUser},
	{name: "secrets", summary: "manage a site's signing certificates (through the running server)",
		subs: []subcommand{
			{"list", "list [--site S]: the site's certificates"},
			{"add", "add ALIAS --file cert.p12 [--site S]: a certificate and its key from a PKCS #12 file"},
			{"delete", "delete ALIAS [--site S]: remove a certificate"},
		}, run: cmdSecrets},
	{name: "config", summary: "print an example config file, or validate one",
		subs: []subcommand{
			{"example", "example [flags]: a commented config file with every setting (flags fill values in)"},
			{"check", "check --config FILE: validate a config file; problems name the file and line"},
		}, run: cmdConfig},
	{name: "service", summary: "install and control the OS service (systemd, Windows SCM)",
		subs: []subcommand{
			{"install", "install [--config FILE] [--user U]: register the service (writes the config when missing, creates the user and data dir)"},
			{"uninstall", "uninstall: remove the service (the data stays)"},
			{"start", "start: start the service"},
			{"stop", "stop: stop the service"},
			{"restart", "restart: restart the service"},
			{"status", "status: whether the service runs"},
			{"unit", "unit: print the systemd unit (systemd/quire.service)"},
			{"run", "run [--config FILE]: serve as the Windows service (what the service control manager starts; elsewhere: serve)"},
		}, run: cmdService},
	{name: "doctor", summary: "check the data dir, disk, store, engines, clock, TLS and config; print what to fix",
		run: func(a []string, stdout, stderr io.Writer) error { return cmdDoctor(a, stdout, stderr) }},
	{name: "backup", summary: "write a backup archive of a running server (--url) or a stopped one (--data-dir)", run: cmdBackup},
	{name: "restore", summary: "unpack a backup archive into a new data dir",
		run: func(a []string, _, stderr io.Writer) error { return cmdRestore(a, os.Stdin, stderr) }},
	{name: "reindex", summary: "rebuild the search index of a stopped server's data dir",
		run: func(a []string, _, stderr io.Writer) error { return cmdReindex(a, stderr) }},
	{name: "cluster", summary: "form and run a cluster of Quire nodes",
		subs: clusterCommands, run: cmdCluster},
	{name: "version", summary: "print the version",
		run: func(_ []string, stdout, _ io.Writer) error {
			fmt.Fprintln(stdout, "quire", node.Version)
			return nil
		}},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: quire <command> [flags]\n\ncommands:")
	for _, c := range commands {
		sum := c.summary
		if len(c.subs) > 0 {
			sum = strings.Join(subNames(c.subs), "|") + ": " + sum
		}
		fmt.Fprintf(w, "  %-9s %s\n", c.name, sum)
	}
	fmt.Fprintln(w, "\nRun \"quire <command> -h\" for a command's flags.")
}

// commandUsage is the usage of a command with subcommands.
func commandUsage(w io.Writer, c command) {
	fmt.Fprintf(w, "usage: quire %s <command> [flags]\n\n%s.\n\ncommands:\n", c.name, c.summary)
	for _, sc := range c.subs {
		fmt.Fprintf(w, "  %-9s %s\n", sc.name, sc.summary)
	}
	fmt.Fprintf(w, "\nRun \"quire %s <command> -h\" for a command's flags.\n", c.name)
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }

// Main runs the command line args (without the program name) and returns
// the exit code: 0 on success or -h, 1 when the command failed, 2 for a
// command line that names no known command.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "--version", "-v":
		args[0] = "version"
	case "help", "-h", "--help":
		usage(stdout)
		return 0
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		fmt.Fprintf(stderr, "quire: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	c := commands[i]
	if len(c.subs) > 0 {
		switch {
		case len(args) == 1:
			commandUsage(stderr, c)
			return 2
		case isHelp(args[1]):
			commandUsage(stdout, c)
			return 0
		case !slices.Contains(subNames(c.subs), args[1]):
			fmt.Fprintf(stderr, "quire %s: unknown command %q\n", c.name, args[1])
			commandUsage(stderr, c)
			return 2
		}
	}
	err := c.run(args[1:], stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if errors.Is(err, errUsage) {
		if err != errUsage {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	var fe *storage.FormatError
	if errors.As(err, &fe) {
		fmt.Fprintln(stderr, "quire:", err)
		return ExitStoreFormat
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire:", err)
		return 1
	}
	return 0
}

// ExitStoreFormat is the exit status of a command refused because the
// data dir's store is of a format this release does not know (written by
// a newer release): the data was not touched. The systemd unit does not
// restart the service on it (RestartPreventExitStatus).
const ExitStoreFormat = 3

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
