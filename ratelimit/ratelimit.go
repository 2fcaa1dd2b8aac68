// Package ratelimit is Quire's one rate-limit mechanism: token buckets
// per client address and for everyone, by route class.
//
// Every route that answers without a token belongs to a class (server's
// route table declares it); each class has a limit per client address and
// a global one, set in the configuration's [ratelimit] table (Classes
// lists the classes, their defaults and help; config builds its settings
// from it). A request takes a token from its client's bucket and from the
// global bucket of its class, or neither: a client over its own limit
// spends nothing of everyone's, so one noisy address cannot starve the
// others. The counts are per process (in a cluster each node counts its
// own), in memory, and bounded (MaxClients addresses per class).
package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limit is a token bucket: Rate tokens a second, at most Burst kept.
type Limit struct {
	Rate  float64
	Burst int
}

// Spec is a class's limits: per client address, and for all clients.
type Spec struct {
	Client, Global Limit
}

// Class is a route class with its default limits.
type Class struct {
	Name    string
	Help    string
	Default string
}

// The route classes. A new class needs a row here (its setting appears in
// `quire config example`) and routes that use it.
const (
	SignIn  = "signin"
	Refresh = "refresh"
	Reset   = "reset"
	Links   = "links"
	Signing = "signing"
	Public  = "public"
	Probe   = "probe"
	Cluster = "cluster"
	Console = "console"
	Dav     = "dav"
)

// Classes are every class, in the order the example configuration lists
// them.
var Classes = []Class{
	{SignIn, "every password check of an address: the sign-in routes (POST /login, /respondToAuthChallenge, /changePassword, /forgotPasswordConfirm, /confirmRegistration), and each WebDAV Basic and SMTP AUTH password actually checked: each costs an argon2 hash.", "10/min burst 10, global 10/s burst 40"},
	{Refresh, "POST /login/refresh and /login/logout (a lookup, no hash), and the console's sign-in through an identity provider (GET /login/oidc, /login/oidc/info, /login/oidc/callback).", "60/min burst 30, global 50/s burst 200"},
	{Reset, "POST /forgotPassword: each may send a mail.", "10/h burst 5, global 60/min burst 30"},
	{Links, "failed signed URLs and short links: PUT /uploads/..., GET /downloads/..., /published/..., /archives/..., /s/{slug} (a valid signature or slug is the credential and spends nothing).", "20/s burst 200, global 200/s burst 1000"},
	{Signing, "e-signature pages: GET and POST /esign/{token}, GET /esign-status/{envelopeId}.", "60/min burst 30, global 20/s burst 200"},
	{Public, "anonymous intake: POST /public/documents, POST /public/webhooks/... (a site's publicDocuments.perClientPerMinute applies too).", "60/min burst 60, global 20/s burst 200"},
	{Probe, "GET /healthz, /readyz, /metrics.", "10/s burst 50, global 100/s burst 500"},
	{Console, "the web console's files: GET /, /console, /console/... (a first load is about 20 files).", "50/s burst 300, global 500/s burst 2000"},
	{Dav, "WebDAV at /dav/{siteId}/... (Basic auth on every request; a checked password is cached for a minute, revocations apply at once; a wrong password counts toward the user's lockout).", "50/s burst 500, global 500/s burst 2000"},
	{Cluster, "POST /cluster/join (the join token is the credential; a member answers 404 unless it is one).", "20/min burst 20, global 120/min burst 120"},
}

// Defaults are the default specs by class.
func Defaults() map[string]string {
	m := make(map[string]string, len(Classes))
	for _, c := range Classes {
		m[c.Name] = c.Default
	}
	return m
}

// Known reports whether name is a class.
func Known(name string) bool {
	for _, c := range Classes {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Most a spec may say: a rate or burst beyond these is a typo, not a limit.
const (
	maxRate  = 1e6 // a second
	maxBurst = 1e6
)

// Parse reads a spec: "RATE burst N, global RATE burst N" where RATE is
// COUNT/s, COUNT/min or COUNT/h (COUNT a positive number), e.g.
// "10/min burst 10, global 10/s burst 40". Both parts are required; a
// burst is a whole number of at least 1.
func Parse(s string) (Spec, error) {
	client, global, ok := strings.Cut(s, ",")
	if !ok {
		return Spec{}, fmt.Errorf("want \"RATE burst N, global RATE burst N\" (RATE as 10/s, 10/min or 10/h), got %q", s)
	}
	c, err := parseLimit(client)
	if err != nil {
		return Spec{}, fmt.Errorf("per client: %w", err)
	}
	g, ok := strings.CutPrefix(strings.TrimSpace(global), "global ")
	if !ok {
		return Spec{}, fmt.Errorf("want \", global RATE burst N\" after the per-client limit, got %q", global)
	}
	gl, err := parseLimit(g)
	if err != nil {
		return Spec{}, fmt.Errorf("global: %w", err)
	}
	if gl.Rate < c.Rate || gl.Burst < c.Burst {
		return Spec{}, fmt.Errorf("the global limit (%s) is below the per-client one (%s): one client could never reach its own", format(gl), format(c))
	}
	return Spec{Client: c, Global: gl}, nil
}

func parseLimit(s string) (Limit, error) {
	f := strings.Fields(s)
	if len(f) != 3 || f[1] != "burst" {
		return Limit{}, fmt.Errorf("want \"RATE burst N\" such as \"10/min burst 5\", got %q", strings.TrimSpace(s))
	}
	count, unit, ok := strings.Cut(f[0], "/")
	n, err := strconv.ParseFloat(count, 64)
	if !ok || err != nil || !(n > 0) || math.IsInf(n, 0) {
		return Limit{}, fmt.Errorf("want a positive rate such as 10/s, 10/min or 10/h, got %q", f[0])
	}
	var per float64
	switch unit {
	case "s":
		per = 1
	case "min":
		per = 60
	case "h":
		per = 3600
	default:
		return Limit{}, fmt.Errorf("rate unit: want s, min or h, got %q", unit)
	}
	b, err := strconv.Atoi(f[2])
	if err != nil || b < 1 || b > maxBurst {
		return Limit{}, fmt.Errorf("burst: want a whole number from 1 to %d, got %q", int(maxBurst), f[2])
	}
	l := Limit{Rate: n / per, Burst: b}
	if l.Rate > maxRate {
		return Limit{}, fmt.Errorf("rate: at most %d a second, got %q", int(maxRate), f[0])
	}
	return l, nil
}

func format(l Limit) string {
	return strconv.FormatFloat(l.Rate, 'g', 4, 64) + "/s burst " + strconv.Itoa(l.Burst)
}

// MaxClients bounds the addresses a class keeps buckets for. Beyond it,
// buckets that are full again (idle clients) are dropped; if none is, a
// new address is refused until one is, so a flood of addresses costs
// bounded memory and falls under the global limit anyway.
const MaxClients = 10000

type bucket struct {
	tokens float64
	at     time.Time
}

// fill refills b to now under l and reports whether a token is there,
// without taking it, and how long until one is.
func (b *bucket) fill(l Limit, now time.Time) (ok bool, wait time.Duration) {
	if el := now.Sub(b.at); el > 0 {
		b.tokens = math.Min(float64(l.Burst), b.tokens+el.Seconds()*l.Rate)
		b.at = now
	}
	if b.tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.Rate * float64(time.Second))
}

// Limiter applies one class's Spec.
type Limiter struct {
	spec    Spec
	mu      sync.Mutex
	global  bucket
	clients map[string]*bucket
}

// NewLimiter returns a limiter with full buckets.
func NewLimiter(s Spec) *Limiter {
	return &Limiter{spec: s, global: bucket{tokens: float64(s.Global.Burst)}, clients: map[string]*bucket{}}
}

// Allow takes a token for client at now from the client's and the global
// bucket, or from neither and says how long to wait.
func (l *Limiter) Allow(client string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.clients[client]
	if b == nil {
		if len(l.clients) >= MaxClients && !l.evict(now) {
			return false, time.Duration(float64(time.Second) / l.spec.Client.Rate)
		}
		b = &bucket{tokens: float64(l.spec.Client.Burst), at: now}
		l.clients[client] = b
	}
	if ok, wait := b.fill(l.spec.Client, now); !ok {
		return false, wait
	}
	if ok, wait := l.global.fill(l.spec.Global, now); !ok {
		return false, wait
	}
	b.tokens--
	l.global.tokens--
	return true, 0
}

// evict drops the buckets of clients that are full again.
func (l *Limiter) evict(now time.Time) bool {
	n := len(l.clients)
	for k, b := range l.clients {
		if b.fill(l.spec.Client, now); b.tokens >= float64(l.spec.Client.Burst) {
			delete(l.clients, k)
		}
	}
	return len(l.clients) < n
}

// Set is a limiter per class.
type Set struct {
	limiters map[string]*Limiter
}

// NewSet builds the limiters of specs (class name to spec text); a class
// specs does not name gets its default. An unknown class or a spec that
// does not parse is an error.
func NewSet(specs map[string]string) (*Set, error) {
	s := &Set{limiters: map[string]*Limiter{}}
	for name := range specs {
		if !Known(name) {
			return nil, fmt.Errorf("ratelimit: unknown class %q", name)
		}
	}
	for _, c := range Classes {
		text, ok := specs[c.Name]
		if !ok || text == "" {
			text = c.Default
		}
		sp, err := Parse(text)
		if err != nil {
			return nil, fmt.Errorf("ratelimit.%s: %w", c.Name, err)
		}
		s.limiters[c.Name] = NewLimiter(sp)
	}
	return s, nil
}

// Allow takes a token of class for client; an unknown class is refused
// (a route declared with a class that does not exist must not pass).
func (s *Set) Allow(class, client string, now time.Time) (bool, time.Duration) {
	l := s.limiters[class]
	if l == nil {
		return false, time.Minute
	}
	return l.Allow(client, now)
}
