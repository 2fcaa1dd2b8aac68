package server

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/storage"
)

// Anonymous document submission (FormKiQ's POST /public/documents; API.md
// "Public documents"): off unless the site's configuration enables it,
// with the site's limits and a per-client rate.

const (
	defaultPublicPerMinute = 10
	maxPublicPerMinute     = 10000
	// maxPublicClients bounds the rate limiter's memory: beyond it the
	// oldest windows are dropped.
	maxPublicClients = 10000
)

// publicLimiter counts submissions per site and client address in
// one-minute windows (one node's count: in a cluster each node counts
// its own).
type publicLimiter struct {
	mu sync.Mutex
	m  map[string]*publicWindow
}

type publicWindow struct {
	start time.Time
	n     int
}

// allow takes one submission of key at now under limit a minute, or
// says how long to wait.
func (l *publicLimiter) allow(key string, now time.Time, limit int) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*publicWindow{}
	}
	w := l.m[key]
	if w == nil || now.Sub(w.start) >= time.Minute {
		if w == nil && len(l.m) >= maxPublicClients {
			for k, old := range l.m {
				if now.Sub(old.start) >= time.Minute {
					delete(l.m, k)
				}
			}
			if len(l.m) >= maxPublicClients {
				return false, time.Minute // a flood of addresses: everyone waits
			}
		}
		w = &publicWindow{start: now}
		l.m[key] = w
	}
	if w.n >= limit {
		return false, time.Minute - now.Sub(w.start)
	}
	w.n++
	return true, 0
}

// handlePublicAddDocument serves POST /public/documents?siteId=: the body
// of POST /documents, with content and without actions, from anyone.
func (s *Server) handlePublicAddDocument(c *fiber.Ctx) error {
	if err := checkURLText(c); err != nil {
		return err
	}
	site := strings.Clone(c.Query("siteId"))
	if site == "" {
		site = auth.DefaultSite
	}
	if !storage.CheckSiteID(site) {
		return errStatus(http.StatusBadRequest, "invalid siteId")
	}
	cfg, err := s.db.SiteConfig(site)
	if err != nil {
		return err
	}
	pd := cfg.PublicDocuments
	if pd == nil || !pd.Enabled {
		return errStatus(http.StatusNotFound, fmt.Sprintf("public documents are not enabled for site '%s'", site))
	}
	limit := pd.PerClientPerMinute
	if limit <= 0 {
		limit = defaultPublicPerMinute
	}
	if ok, wait := s.public.allow(site+"\x00"+c.IP(), s.now(), limit); !ok {
		drain(c)
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(max(1, int(wait.Seconds()+0.5))))
		return errStatus(http.StatusTooManyRequests, "Too many documents from this address: try again later")
	}
	p := &auth.Principal{Username: "public", Sites: map[string][]auth.Permission{site: {auth.PermWrite}}}
	return s.handleAddDocument(&reqCtx{Ctx: c, p: p, site: site, now: s.now().UTC(), public: true})
}
