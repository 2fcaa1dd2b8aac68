package servertest

import (
	"regexp"
	"strings"
	"testing"

	"quire/pipeline/mailer"
	"quire/quiretest"
)

var signingLink = regexp.MustCompile(`https?://[^\s]+/esign/([A-Za-z0-9_-]+)`)

// LinksTo returns the signing links mailed to addr, oldest first.
func LinksTo(mail *quiretest.MailServer, addr string) []string {
	var out []string
	for _, m := range mail.Messages() {
		for _, to := range m.To {
			if strings.EqualFold(to, addr) {
				data := strings.ReplaceAll(m.Data, "=\r\n", "")
				if l := signingLink.FindString(data); l != "" {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

func EsignServer(t *testing.T) (*quiretest.Server, *quiretest.MailServer) {
	mail := quiretest.NewMailServer(t)
	s := quiretest.NewServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.SMTP = mailer.Config{Host: mail.Host, Port: mail.Port, From: "quire@example.com"}
	})
	return s, mail
}
