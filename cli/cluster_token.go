package cli

import (
	"flag"
	"fmt"
	"io"

	"quire/config"
	"quire/node"
)

// cmdClusterToken prints a join token made with the cluster CA's keys in
// a member's data dir (every member holds them; the files are read, so
// it works while the server runs). Whoever holds the token can join a
// node until it expires or is used: pass it to the new node only.
func cmdClusterToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cluster token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ttl := fs.Duration("ttl", 0, "token lifetime (default 1h, at most 24h)")
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	tok, err := node.IssueJoinToken(l.DataDir, *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}
