package admin

import (
	"quire/server/content"
	"quire/server/internal/api"
)

// Handlers serve what administrators and site governors set up and
// watch: sites and API keys, site and system configuration, system
// health, the cluster's members, backups, inference models, event
// subscriptions, short links and key rotation.
type Handlers struct {
	*api.Env
	// Content gives a short link's URL as documents' short URLs are given.
	Content *content.Handlers
	// Leads says whether this server does the leader's work now (the
	// pipeline runs on the leader only: a follower's stopped pipeline is
	// not a fault).
	Leads func() bool
	// SweepRetention runs the retention sweep now (a site's retention
	// settings changed).
	SweepRetention func()
}
