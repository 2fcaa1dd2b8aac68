package cli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"quire/auth"
	"quire/config"
)

// cmdUser manages the built-in user directory of a running server, for
// the first administrator and for recovery: it signs a short admin token
// with the data dir's key (as quire token does) and calls the server's
// API, so it works while the server holds the store.
//
//	quire user add NAME [--groups Admins,finance] [--password P]
//	quire user passwd NAME [--password P]
//	quire user disable|enable NAME
func cmdUser(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: quire user add|passwd|disable|enable NAME [flags]", errUsage)
	}
	op := args[0]
	fs := flag.NewFlagSet("user "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	api := addAdminFlags(fs)
	groups := fs.String("groups", "", "add: comma-separated groups to put the user in (created when missing), e.g. Admins")
	password := fs.String("password", "", "temporary password (default: QUIRE_PASSWORD, else a random one, printed); the user sets a new one at the first sign-in")
	var name string
	rest := args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	c, err := api.client(fs, rest)
	if err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	}
	if name == "" {
		return fmt.Errorf("%w: quire user %s NAME", errUsage, op)
	}
	// A random password is printed only once the server has taken it:
	// printing it before would show a password for a user that a refused
	// or unreachable server never created.
	var generated string
	pw := func() string {
		p := firstNonEmpty(*password, os.Getenv("QUIRE_PASSWORD"))
		if p == "" {
			p, _ = auth.NewSecret(12)
			generated = p
		}
		return p
	}
	printGenerated := func() {
		if generated != "" {
			fmt.Fprintf(stdout, "temporary password: %s\n", generated)
		}
	}
	u := url.PathEscape(name)
	switch op {
	case "add":
		if err := c.send(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": name}, "temporaryPassword": pw()}, nil); err != nil {
			return err
		}
		printGenerated()
		for _, g := range strings.Split(*groups, ",") {
			if g = strings.TrimSpace(g); g == "" {
				continue
			}
			var st int
			if err := c.send(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": g}}, &st); err != nil && st != http.StatusConflict {
				return err
			}
			if err := c.send(http.MethodPost, "/groups/"+url.PathEscape(g)+"/users", map[string]any{"user": map[string]any{"username": name}}, nil); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "user %s added\n", name)
	case "passwd":
		if err := c.send(http.MethodPut, "/users/"+u+"/RESET_PASSWORD", map[string]any{"temporaryPassword": pw()}, nil); err != nil {
			return err
		}
		printGenerated()
		fmt.Fprintf(stdout, "temporary password set for %s\n", name)
	case "disable", "enable":
		if err := c.send(http.MethodPut, "/users/"+u+"/"+strings.ToUpper(op), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "user %s %sd\n", name, op)
	default:
		return fmt.Errorf("%w: unknown user command %q (add, passwd, disable, enable)", errUsage, op)
	}
	return nil
}

// adminFlags are the flags of the commands that call a running server's
// API as an administrator (quire user, quire secrets).
type adminFlags struct{ base, caFile *string }

func addAdminFlags(fs *flag.FlagSet) adminFlags {
	return adminFlags{
		base:   fs.String("url", "", "base URL of the running server (default http://<listen> of the config)"),
		caFile: fs.String("ca-file", "", "PEM certificate to trust for an https --url"),
	}
}

// client loads the configuration from fs and args and returns the
// server's API with a 5-minute admin token signed by the data dir's key.
func (f adminFlags) client(fs *flag.FlagSet, args []string) (*apiClient, error) {
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir", "listen"}})
	if err != nil {
		return nil, err
	}
	if *f.base == "" {
		*f.base = "http://" + l.Listen
	}
	tok, err := auth.SignToken(l.DataDir, "", "quire-cli", []string{auth.GroupAdmins}, 5*time.Minute)
	if err != nil {
		return nil, err
	}
	return newAPIClient(*f.base, tok, *f.caFile)
}

// newAPIClient is a running server's API at base with token, trusting
// caFile's certificate for https when given.
func newAPIClient(base, token, caFile string) (*apiClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pemBytes, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &apiClient{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}, nil
}

// send sends body as JSON; a status other than 2xx is an error carrying
// the server's answer (and its status in *status when given).
func (c *apiClient) send(method, path string, body any, status *int) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w (is the server running? give its address with --url)", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if status != nil {
		*status = resp.StatusCode
	}
	if resp.StatusCode/100 != 2 {
		return errors.New(method + " " + path + ": " + resp.Status + ": " + strings.TrimSpace(string(b)))
	}
	return nil
}
