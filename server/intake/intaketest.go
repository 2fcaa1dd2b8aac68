package intake

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	qintake "quire/intake"
	"quire/server/internal/api"
	"quire/storage"
)

// The intake test (Quire, issue 47; API.md "Scanner intake"): POST
// /sites/{siteId}/intakeProfiles/{name}/test checks, without making a
// document, that a profile's watched folder is there and takes files, and
// that its mail address reaches the scan-to-e-mail listener and routes to
// the profile.

// mailLocal is what a mail address's local part holds as it is (an atom
// without "+", which separates the site from the profile).
var mailLocal = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// mailAddress is a profile's scan-to-e-mail address, "" when the server
// has no listener or the site id cannot be a mail address's local part.
func (s *Handlers) mailAddress(site, name string) string {
	m := s.smtp.Load()
	if m == nil || !mailLocal.MatchString(site) {
		return ""
	}
	return site + "+" + name + "@" + m.cfg.Domain
}

// intakeCheck is one check's outcome.
type intakeCheck struct {
	Source  string `json:"source"` // watchFolder, mail
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
	Address string `json:"mailAddress,omitempty"`
}

// HandleTestIntakeProfile serves POST /sites/{siteId}/intakeProfiles/{name}/test
// {"source":"watchFolder"|"mail"} (default both).
func (s *Handlers) HandleTestIntakeProfile(r *api.Request) error {
	p, err := s.DB.IntakeProfile(r.Site, api.PathParam(r, "name"))
	if err != nil {
		return err
	}
	var in struct {
		Source string `json:"source"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil && !errors.Is(err, api.ErrNoBody) {
		return err
	}
	var out []intakeCheck
	switch in.Source {
	case "":
		out = append(out, s.testWatchFolder(r.Site, p), s.testMail(r, p))
	case "watchFolder":
		out = append(out, s.testWatchFolder(r.Site, p))
	case "mail":
		out = append(out, s.testMail(r, p))
	default:
		return api.Invalid("source", "invalid 'source', use watchFolder or mail")
	}
	return r.JSON(map[string]any{"tests": out})
}

// testWatchFolder prepares the profile's folder as the poller does (the
// folder, done/ and failed/) and writes and removes a hidden file there
// (the poller leaves names starting with "." alone).
func (s *Handlers) testWatchFolder(site string, p *storage.IntakeProfile) intakeCheck {
	c := intakeCheck{Source: "watchFolder"}
	switch {
	case p.Watch == nil || !p.Watch.Enabled:
		c.Message = "the profile has no watched folder"
		return c
	case s.Deps.IntakeFolderRoot == "":
		c.Message = "the server has no intake.folder_root"
		return c
	}
	dir, err := qintake.WatchDir(s.Deps.IntakeFolderRoot, site, p.Name)
	if err != nil || dir == "" {
		c.Message = "the folder cannot be used: " + errText(err)
		return c
	}
	c.Path = dir
	if err := qintake.Prepare(dir); err != nil {
		c.Message = "the folder cannot be made: " + errText(err)
		return c
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	f := filepath.Join(dir, ".quire-test-"+hex.EncodeToString(b))
	if err := os.WriteFile(f, []byte("quire intake test\n"), 0o600); err != nil {
		c.Message = "files cannot be written to the folder: " + errText(err)
		return c
	}
	if err := os.Remove(f); err != nil {
		c.Message = "a test file could not be removed from the folder: " + errText(err)
		return c
	}
	c.OK, c.Message = true, "the folder is there and takes files"
	return c
}

// testMail checks that the listener answers (a connection and its 220
// greeting, then QUIT) and that the profile's address routes to it.
func (s *Handlers) testMail(r *api.Request, p *storage.IntakeProfile) intakeCheck {
	c := intakeCheck{Source: "mail"}
	m := s.smtp.Load()
	if m == nil {
		c.Message = "the server has no scan-to-e-mail listener (intake_smtp.listen)"
		return c
	}
	c.Address = s.mailAddress(r.Site, p.Name)
	if c.Address == "" {
		c.Message = "the site's id cannot be part of a mail address"
		return c
	}
	site, name, ok := smtpRecipient(c.Address, r.Principal)
	if !ok || site != r.Site || name != p.Name {
		c.Message = "the address does not lead to this profile"
		return c
	}
	a := m.addr.Load()
	if a == nil {
		c.Message = "the scan-to-e-mail listener is not running"
		return c
	}
	host, port, err := net.SplitHostPort(*a)
	if err == nil && (host == "0.0.0.0" || host == "::") {
		host = "127.0.0.1" // listening everywhere: ask it on loopback
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 5*time.Second)
	if err != nil {
		c.Message = "the scan-to-e-mail listener does not answer: " + errText(err)
		return c
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(io1k{conn}).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "220") {
		c.Message = "the scan-to-e-mail listener does not greet"
		return c
	}
	_, _ = conn.Write([]byte("QUIT\r\n"))
	c.OK, c.Message = true, "mail to the address reaches this profile"
	return c
}

func errText(err error) string {
	if err == nil {
		return "unknown"
	}
	return err.Error()
}

// io1k reads at most 1 KiB: the greeting line is short, and a peer that
// sends without end is not read further.
type io1k struct{ c net.Conn }

func (r io1k) Read(b []byte) (int, error) {
	if len(b) > 1024 {
		b = b[:1024]
	}
	return r.c.Read(b)
}
