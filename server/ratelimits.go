package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/ratelimit"
	"quire/server/internal/api"
)

// Rate limits of the routes that answer without a token (API.md "Rate
// limits"; the ratelimit package). Each such route is registered through
// Server.public with its class, in the route table.

// publicRoute registers a route that needs no token under a rate-limit
// class. A GET route answers HEAD too, as fiber's Get does.
func (s *Server) publicRoute(method, path, class string, h fiber.Handler) {
	methods := []string{method}
	if method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	lim := s.limit(class)
	if failuresOnly[class] {
		lim = s.limitFailures(class)
	}
	for _, m := range methods {
		s.limitClass[m+" "+path] = class
		s.app.Add(m, path, lim, h)
	}
}

// failuresOnly are the classes whose routes carry their own credential
// (a signed URL, a short link's slug): a request that proves its right
// spends nothing, only a failed one does (issue 43: a backup script
// reading back documents through /documents/{id}/url is the caller the
// signature names, not a flood).
var failuresOnly = map[string]bool{ratelimit.Links: true}

// limitFailures runs the route first (its check of the signature or slug
// is cheap: an HMAC, a key lookup) and spends a token of class only for
// an answer that failed it (4xx; a 416 answers a valid link): over the
// budget, that answer becomes 429 with Retry-After. So guessing
// signatures or slugs is limited as before, and valid links are not
// limited at all, even from an address that failed before.
func (s *Server) limitFailures(class string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := c.Next()
		if err != nil {
			if herr := s.app.Config().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		st := c.Response().StatusCode()
		if st < 400 || st >= 500 || st == http.StatusRequestedRangeNotSatisfiable {
			return nil
		}
		ok, wait := s.Limits.Allow(class, c.IP(), s.Now())
		if ok {
			return nil
		}
		c.Response().ResetBody()
		return s.tooMany(c, wait)
	}
}

// limit answers 429 with Retry-After when the client's or everyone's
// budget of class is spent, and counts it in quire_ratelimited_total.
func (s *Server) limit(class string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ok, wait := s.Limits.Allow(class, c.IP(), s.Now())
		if ok {
			return c.Next()
		}
		return s.tooMany(c, wait)
	}
}

// tooMany answers a request over its rate limit: 429 with Retry-After,
// counted in quire_ratelimited_total.
func (s *Server) tooMany(c *fiber.Ctx, wait time.Duration) error {
	s.metrics.ratelimited.WithLabelValues(api.RouteName(c)).Inc()
	secs := int(math.Ceil(wait.Seconds()))
	secs = max(1, min(secs, int((24*time.Hour).Seconds())))
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return api.ErrStatus(http.StatusTooManyRequests, fmt.Sprintf("Too many requests: try again in %d s", secs))
}

// newLimits builds the rate limiters of d.RateLimit; the configuration
// was validated, so a spec that does not parse here (a caller that built
// Deps by hand) falls back to the defaults, loudly.
func newLimits(d api.Deps) *ratelimit.Set {
	set, err := ratelimit.NewSet(d.RateLimit)
	if err != nil {
		d.Logger.Error("rate limits not taken, the defaults apply", "err", err)
		set, _ = ratelimit.NewSet(nil)
	}
	return set
}
