package console_test

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/pipeline/mailer"
	"quire/quiretest"
)

// received counts the mails m holds to addr.
func received(m *quiretest.MailServer, addr string) int {
	n := 0
	for _, msg := range m.Messages() {
		for _, to := range msg.To {
			if strings.EqualFold(to, addr) {
				n++
			}
		}
	}
	return n
}

// mailCount waits until m holds want mails to addr (the API answered
// already: the mail is there or never comes), failing after 20 s.
func mailCount(m *quiretest.MailServer, addr string, want int) chromedp.Action {
	return check(func() error {
		if got := received(m, addr); got != want {
			return fmt.Errorf("%d mails to %s on %s:%d, want %d", got, addr, m.Host, m.Port, want)
		}
		return nil
	})
}

// TestConsole_MailSettings (issue 47): the Mail page shows both mail
// settings in one place and says which mail goes through which. An Admin
// sees where password mail goes (the configuration file's [smtp]) and
// tests it; the site's mail server is set there with the keyboard and
// tested, its test going to the site's server and never the password
// mail through it; a mail server that refuses is said in plain words
// with the reason behind Details; German and French; a phone; a governor
// sees whether the server can send password mail, and no test of it.
func TestConsole_MailSettings(t *testing.T) {
	t.Parallel()
	src := axeFile()
	server := quiretest.NewMailServer(t)
	relay := quiretest.NewMailServer(t)
	e := newEnv(t, quiretest.AllowLoopbackOutbound, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: server.Host, Port: server.Port, From: "quire@example.com"}
	})
	e.adminUser(t, "mia")
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "default_govern"}}, http.StatusOK)
	e.user(t, "gus", "default_govern", "temporary-1", true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close() // nothing listens there now: the connection is refused

	const it = "it@example.com"
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("mia", password)...)
	steps = append(steps,
		step{"the Mail tab from the configuration", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/config"),
			visible("#cfg-mail-moved"), absent("#config-form #cfg-host"),
			click(`nav.tabs a[href="#/admin/mail"]`), textOf("#mail-title", "Mail")}},
		step{"where password mail goes", chromedp.Tasks{
			textOf(`#mail-server-state[data-configured="true"]`, fmt.Sprintf("The server can send password mail: through %s:%d, from quire@example.com.", server.Host, server.Port)),
			textOf("#mail-server", "never used for password mail"),
			textOf(`#mail-site-state[data-own="false"]`, "Site default has no mail server of its own: its mail goes through the server's."),
			noRawText(), axeAll(src, "mail page"), shot("admin-mail")}},
		step{"test password mail with the keyboard", chromedp.Tasks{tabTo("mail-server-test-to"),
			chromedp.KeyEvent(strings.Repeat(kb.Backspace, 40)), chromedp.KeyEvent(it), chromedp.KeyEvent(kb.Enter),
			textOf("#mail-server-result", "A test mail went to it@example.com through the server's mail server."), mailCount(server, it, 1), mailCount(relay, it, 0)}},
		step{"set the site's mail server", chromedp.Tasks{tabTo("mail-host"), chromedp.KeyEvent(relay.Host),
			tabTo("mail-port"), chromedp.KeyEvent(strconv.Itoa(relay.Port)),
			tabTo("mail-sender"), chromedp.KeyEvent("office@example.com"), click("#mail-form button[type=submit]"),
			textOf("#status", "Mail settings of site default saved."),
			textOf(`#mail-site-state[data-own="true"]`, fmt.Sprintf("Site default sends through its own mail server, %s:%d.", relay.Host, relay.Port))}},
		step{"test the site's mail", chromedp.Tasks{setValue("#mail-site-test-to", it), click("#mail-site-test button[type=submit]"),
			textOf("#mail-site-result", "A test mail went to it@example.com with the site's settings."),
			mailCount(relay, it, 1), mailCount(server, it, 1), shot("admin-mail-tested")}},
		step{"a mail server that refuses", chromedp.Tasks{setValue("#mail-port", closed), click("#mail-form button[type=submit]"),
			textOf("#status", "saved"), textOf(`#mail-site-state[data-own="true"]`, ":"+closed),
			setValue("#mail-site-test-to", it), click("#mail-site-test button[type=submit]"),
			textOf(`#mail-site-result[role="alert"]`, "The test mail was not sent: the mail server could not be reached or refused it."),
			textOf("#mail-site-result details summary", "Details"), noRawText(), axeAll(src, "mail test failed")}},
		step{"German", chromedp.Tasks{setLang("de"), textOf("#mail-title", "E-Mail"),
			textOf("#mail-server-state", "Der Server kann Passwort-E-Mails senden"), textOf("#mail-site-title", "E-Mail des Bereichs default"),
			noRawText(), axeAll(src, "mail page de")}},
		step{"French", chromedp.Tasks{setLang("fr"), textOf("#mail-title", "Messagerie"),
			textOf("#mail-server-state", "Le serveur peut envoyer les courriels de mot de passe"), axeAll(src, "mail page fr"), setLang("en")}},
		step{"on a phone", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/#/admin/mail"),
			visible("#mail-form"), noSideways("phone mail"), axeAll(src, "phone mail"), shot("phone-mail"), viewport(1280, 900)}},
		step{"sign out", chromedp.Tasks{click("#signout"), visible("#login")}},
	)
	steps = append(steps, signIn("gus", password)...)
	steps = append(steps,
		step{"a governor sees whether password mail works, and no test of it", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/mail"),
			textOf(`#mail-server-state[data-configured="true"]`, "The server can send password mail."), absent("#mail-server-test"),
			visible("#mail-site-test"), axeAll(src, "governor mail page")}},
	)
	b.run(steps...)
}
