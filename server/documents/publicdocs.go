package documents

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/ratelimit"
	"quire/server/internal/api"
	"quire/storage"
)

// Anonymous document submission (FormKiQ's POST /public/documents; API.md
// "Public documents"): off unless the site's configuration enables it,
// with the site's limits and a per-client rate.

const (
	defaultPublicPerMinute = 10
	MaxPublicPerMinute     = 10000
)

// publicLimiter applies each site's publicDocuments.perClientPerMinute
// with the ratelimit package's buckets (one node's count: in a cluster
// each node counts its own), on top of the route's class limit.
type publicLimiter struct {
	mu sync.Mutex
	m  map[string]*sitePublicLimit
}

type sitePublicLimit struct {
	perMinute int
	l         *ratelimit.Limiter
}

// allow takes one submission of client to site under perMinute a minute
// (bursts of perMinute), or says how long to wait.
func (p *publicLimiter) allow(site, client string, now time.Time, perMinute int) (bool, time.Duration) {
	p.mu.Lock()
	if p.m == nil {
		p.m = map[string]*sitePublicLimit{}
	}
	e := p.m[site]
	if e == nil || e.perMinute != perMinute {
		// Everyone's budget is the route class's (ratelimit.Public).
		e = &sitePublicLimit{perMinute: perMinute, l: ratelimit.NewLimiter(ratelimit.Spec{
			Client: ratelimit.Limit{Rate: float64(perMinute) / 60, Burst: perMinute},
			Global: ratelimit.Limit{Rate: math.MaxFloat64, Burst: math.MaxInt32}})}
		p.m[site] = e
	}
	p.mu.Unlock()
	return e.l.Allow(client, now)
}

// HandlePublicAddDocument serves POST /public/documents?siteId=: the body
// of POST /documents, with content and without actions, from anyone.
func (s *Handlers) HandlePublicAddDocument(c *fiber.Ctx) error {
	if err := api.CheckURLText(c); err != nil {
		return err
	}
	site := strings.Clone(c.Query("siteId"))
	if site == "" {
		site = auth.DefaultSite
	}
	if !storage.CheckSiteID(site) {
		return api.ErrStatus(http.StatusBadRequest, "invalid siteId")
	}
	cfg, err := s.DB.SiteConfig(site)
	if err != nil {
		return err
	}
	pd := cfg.PublicDocuments
	if pd == nil || !pd.Enabled {
		return api.ErrStatus(http.StatusNotFound, fmt.Sprintf("public documents are not enabled for site '%s'", site))
	}
	limit := pd.PerClientPerMinute
	if limit <= 0 {
		limit = defaultPublicPerMinute
	}
	if ok, wait := s.public.allow(site, c.IP(), s.Now(), limit); !ok {
		s.RateLimited(api.RouteName(c))
		api.Drain(c)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(1, int(wait.Seconds()+0.5))))
		return api.ErrStatus(http.StatusTooManyRequests, "Too many documents from this address: try again later")
	}
	p := &auth.Principal{Username: "public", Sites: map[string][]auth.Permission{site: {auth.PermWrite}}}
	return s.HandleAddDocument(&api.Request{Ctx: c, Principal: p, Site: site, Now: s.Now().UTC(), Public: true})
}
