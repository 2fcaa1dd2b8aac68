package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"quire/auth"
	"quire/config"
)

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
