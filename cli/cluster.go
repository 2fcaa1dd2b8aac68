package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"quire/auth"
)

// clusterCommands are quire cluster's subcommands (cmdCluster runs them).
var clusterCommands = []subcommand{
	{"token", "print a join token, read from a member's data dir (--data-dir)"},
	{"status", "show a member's view of the cluster (--url, admin token)"},
	{"join", "trade a join token for this data dir's membership without serving (serve --join does it too)"},
	{"leave", "take the member at --url out of the cluster"},
	{"remove", "take node NODE_ID out of the cluster (ask any member at --url)"},
	{"rejoin", "rebuild the Raft state of the member in --data-dir from the others (ask another member at --url)"},
	{"verify", "compare a digest of every member's data at one log index (--url, admin token)"},
}

// cmdCluster runs quire cluster <command>: cluster_token.go,
// cluster_status.go, cluster_join.go, cluster_remove.go (remove and
// leave), cluster_rejoin.go.
func cmdCluster(args []string, stdout, stderr io.Writer) error {
	switch args[0] {
	case "token":
		return cmdClusterToken(args[1:], stdout, stderr)
	case "status":
		return cmdClusterStatus(args[1:], stdout, stderr)
	case "join":
		return cmdClusterJoin(args[1:], stdout, stderr)
	case "leave":
		return cmdClusterLeave(args[1:], stdout, stderr)
	case "remove":
		return cmdClusterRemove(args[1:], stdout, stderr)
	case "rejoin":
		return cmdClusterRejoin(args[1:], stdout, stderr)
	case "verify":
		return cmdClusterVerify(args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: quire cluster: unknown command %q", errUsage, args[0])
}

// apiFlags are the flags of the cluster commands that call a member's
// API: its URL, an admin token (or one signed with a member's data dir,
// whose keys every member shares) and the certificate to trust.
type apiFlags struct {
	url, token, caFile, dataDir *string
}

func addAPIFlags(fs *flag.FlagSet) apiFlags {
	return apiFlags{
		url:     fs.String("url", "", "base URL of a member's API, e.g. https://127.0.0.1:8080 (required)"),
		token:   fs.String("token", "", "admin token (or QUIRE_TOKEN); default: one signed with --data-dir's keys"),
		caFile:  fs.String("ca-file", "", "PEM certificate to trust for an https --url (default: <data-dir>/tls/cert.pem when it exists)"),
		dataDir: fs.String("data-dir", "", "a member's data dir: signs an admin token when --token is not given"),
	}
}

// apiClient is a member's API with an admin token.
type apiClient struct {
	base, token string
	http        *http.Client
}

func (f apiFlags) client() (*apiClient, error) {
	if *f.url == "" {
		return nil, errors.New("--url is required (a member's API, e.g. https://127.0.0.1:8080)")
	}
	tok := firstNonEmpty(*f.token, os.Getenv("QUIRE_TOKEN"))
	if tok == "" && *f.dataDir != "" {
		if _, err := os.Stat(filepath.Join(*f.dataDir, "keys", "jwt-signing.pem")); err != nil {
			return nil, fmt.Errorf("%s holds no signing key: is it a member's data dir? (%w)", *f.dataDir, err)
		}
		var err error
		if tok, err = auth.SignToken(*f.dataDir, "", "quire-cluster", []string{"Admins"}, 5*time.Minute); err != nil {
			return nil, err
		}
	}
	if tok == "" {
		return nil, errors.New("an admin token is needed: --token, QUIRE_TOKEN or --data-dir of a member")
	}
	caFile := *f.caFile
	if caFile == "" && *f.dataDir != "" {
		if p := filepath.Join(*f.dataDir, "tls", "cert.pem"); fileExists(p) {
			caFile = p
		}
	}
	return newAPIClient(*f.url, tok, caFile)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// do sends a request and decodes a 2xx JSON answer into out; any other
// status is an error with the server's message.
func (c *apiClient) do(method, path string, out any) error {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s %s", method, path, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
