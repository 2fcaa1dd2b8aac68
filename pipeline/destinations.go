package pipeline

// These check destinations users give when they give them, so that a
// request naming one the outbound policy refuses is answered with a 400
// rather than an action failing later. They see literal addresses only;
// names are checked when dialed.

// CheckWebhookURL checks a WEBHOOK action's url.
func (p *Pipeline) CheckWebhookURL(u string) error { return p.cfg.Outbound.CheckURL(u) }

// CheckSiteLLMURL checks a site's llm.url. The server's own endpoint is
// the operator's choice and passes as given.
func (p *Pipeline) CheckSiteLLMURL(u string) error {
	if sameURL(u, p.cfg.Engines.LLM.URL) {
		return nil
	}
	return p.cfg.Outbound.CheckURL(u)
}

// CheckSiteSMTPHost checks a site's notification.smtp.host.
func (p *Pipeline) CheckSiteSMTPHost(host string) error { return p.cfg.Outbound.CheckHost(host) }
