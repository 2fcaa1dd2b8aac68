package cli

import (
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// cmdSecrets manages a site's secrets store on a running server (API.md
// "Secrets and certification"), signing a short admin token with the
// data dir's key as quire user does:
//
//	quire secrets list [--site S]
//	quire secrets add ALIAS --file cert.p12 [--password P] [--site S]
//	quire secrets delete ALIAS [--site S]
func cmdSecrets(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: quire secrets list|add|delete [ALIAS] [flags]", errUsage)
	}
	op := args[0]
	fs := flag.NewFlagSet("secrets "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := addAdminFlags(fs)
	site := fs.String("site", "default", "site of the secret")
	file := fs.String("file", "", "add: the PKCS #12 (.p12, .pfx) file of the certificate and its key")
	password := fs.String("password", "", "add: the file's password (default: QUIRE_PKCS12_PASSWORD)")
	var alias string
	rest := args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		alias, rest = rest[0], rest[1:]
	}
	c, err := api.client(fs, rest)
	if err != nil {
		return err
	}
	path := "/sites/" + url.PathEscape(*site) + "/secrets"
	switch op {
	case "list":
		var out struct {
			Secrets []struct {
				Alias, Type, Subject, NotAfter, Fingerprint string
			}
		}
		if err := c.do(http.MethodGet, path+"?limit=1000", &out); err != nil {
			return err
		}
		for _, s := range out.Secrets {
			fmt.Fprintf(stdout, "%-20s %-12s expires %s  %s  sha256:%s\n", s.Alias, s.Type, s.NotAfter, s.Subject, s.Fingerprint)
		}
	case "add":
		if alias == "" || *file == "" {
			return fmt.Errorf("%w: quire secrets add ALIAS --file cert.p12", errUsage)
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		pw := firstNonEmpty(*password, os.Getenv("QUIRE_PKCS12_PASSWORD"))
		if err := c.send(http.MethodPost, path, map[string]any{"alias": alias, "type": "PKCS12", "data": base64.StdEncoding.EncodeToString(b), "password": pw}, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "secret %s added to site %s\n", alias, *site)
	case "delete":
		if alias == "" {
			return fmt.Errorf("%w: quire secrets delete ALIAS", errUsage)
		}
		if err := c.send(http.MethodDelete, path+"/"+url.PathEscape(alias), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "secret %s deleted from site %s\n", alias, *site)
	default:
		return fmt.Errorf("%w: unknown secrets command %q (list, add, delete)", errUsage, op)
	}
	return nil
}
