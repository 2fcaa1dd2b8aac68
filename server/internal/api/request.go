package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"quire/access"
	"quire/auth"
	"quire/storage"
)

// The activity trail (API.md "Activity trail"; storage/activity.go):
// GET /documents/{id}/userActivities and GET /userActivities.

// Via is where a request's commands come from, stored with each command.
func Via(r *Request) *storage.Via {
	v := &storage.Via{RequestID: RequestID(r.Ctx), Source: storage.SourceUser}
	switch {
	case r.Public:
		v.Source = storage.SourcePublic
	case r.Principal == nil:
	case r.Principal.Delegation != nil:
		v.Source, v.Actor, v.Reason = storage.SourceDelegation, r.Principal.Delegation.Actor, r.Principal.Delegation.Reason
	case r.Principal.APIKeySite != "":
		v.Source, v.Actor = storage.SourceAPIKey, r.Principal.APIKeyName
	case strings.HasPrefix(r.User(), "webhook/"):
		v.Source = storage.SourceWebhook
	}
	v.Govern = r.Principal != nil && r.Principal.Can(r.Site, auth.PermGovern)
	return v
}

// DocID is the id of the record the request acts on: the path's document,
// or the artifact named by artifactId (resolveDocument).
func (r *Request) DocID() string {
	if r.ArtifactID != "" {
		return r.ArtifactID
	}
	return r.PathDocID()
}

// PathDocID is the {documentId} of the path.
func (r *Request) PathDocID() string { return strings.Clone(r.Params("documentId")) }

const (
	LocalRequestID = "requestId"
	LocalPrincipal = "principal"
	localBody      = "body"
)

func RequestID(c *fiber.Ctx) string {
	id, _ := c.Locals(LocalRequestID).(string)
	return id
}

// RouteName is the matched route template (never the raw path, which can
// hold document ids or names).
func RouteName(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" {
		return r.Path
	}
	return "unmatched"
}

// CheckURLText refuses a request whose path parameters or query values
// are not valid UTF-8 once percent-decoded: they would reach storage, the
// index or an answer as U+FFFD, a silent change of what the client sent.
func CheckURLText(c *fiber.Ctx) error {
	if p, err := url.PathUnescape(string(c.Request().URI().PathOriginal())); err == nil && !utf8.ValidString(p) {
		return Invalid("path", "the request path is not valid UTF-8")
	}
	var bad string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if bad == "" && !(utf8.Valid(k) && utf8.Valid(v)) {
			bad = strings.ToValidUTF8(string(k), "?")
		}
	})
	if bad != "" {
		return Invalid(bad, "query parameter '"+bad+"' is not valid UTF-8")
	}
	return nil
}

// Request is what a handler gets: the fiber context, the caller, the site
// the request acts on (already authorized) and the request time.
type Request struct {
	*fiber.Ctx
	Principal *auth.Principal
	Site      string
	Now       time.Time
	// public marks an anonymous submission (POST /public/documents).
	Public bool

	// PageTok, when set, replaces the request's `next` token (POST
	// /search walking pages for a `previous` link).
	PageTok *string

	// art is the artifactId the request acts on, checked to be an
	// artifact of the path's document (resolveDocument); DocID() is then
	// the artifact's record id.
	ArtifactID string

	// bodySum is the SHA-256 of the body (ReadBody, bufferBody).
	bodySum []byte

	// share is the folder share a request with shareKey acts through
	// (guard.go useShare).
	share *storage.Share
	// rights are the caller's rights in the site (the site's folder
	// permissions and the shares naming the caller), loaded once on the
	// first check (guard.go Rights): every later check is in memory.
	rights     *access.Rights
	rightsSite string
}

// PageToken is the paging token a search starts from.
func (r *Request) PageToken() string {
	if r.PageTok != nil {
		return *r.PageTok
	}
	return r.Query("next")
}

// User is the caller's name as stored in userId fields.
func (r *Request) User() string { return r.Principal.Username }

type Handler func(r *Request) error

// SiteFrom says where a route takes its site id from.
type SiteFrom int

const (
	SiteQuery SiteFrom = iota // ?siteId= with FormKiQ's fallback rules
	SitePath                  // the {siteId} path parameter
	SiteNone                  // not site scoped (GET /sites, /version)
)

// Wrap turns a handler into a fiber handler that resolves the site and
// checks that the caller holds perm on it.
func (s *Env) Wrap(from SiteFrom, perm auth.Permission, h Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := c.Locals(LocalPrincipal).(*auth.Principal)
		if p == nil {
			return &auth.Error{Status: http.StatusUnauthorized, Msg: "Unauthorized"}
		}
		if err := CheckURLText(c); err != nil {
			return err
		}
		r := &Request{Ctx: c, Principal: p, Now: s.Now().UTC()}
		shareKey := strings.Clone(c.Query("shareKey"))
		if shareKey != "" && from != SiteQuery {
			return Invalid("shareKey", "'shareKey' is not supported on this route")
		}
		switch {
		case shareKey != "":
			if err := s.useShare(r, shareKey, perm); err != nil {
				return err
			}
		case from == SiteQuery:
			site, err := p.SelectSite(strings.Clone(c.Query("siteId")))
			if err != nil {
				return err
			}
			r.Site = site
		case from == SitePath:
			site := SiteParam(c)
			if _, err := p.SelectSite(site); err != nil {
				return err
			}
			r.Site = site
		}
		if from != SiteNone && !storage.CheckSiteID(r.Site) {
			return ErrStatus(http.StatusBadRequest, "invalid siteId")
		}
		if from != SiteNone && perm != "" && r.share == nil {
			if err := p.Require(r.Site, perm); err != nil {
				return err
			}
		}
		if err := s.refuseUnsupportedQuery(c); err != nil {
			return err
		}
		run := func() error {
			if err := s.resolveDocument(r, perm); err != nil {
				return err
			}
			return h(r)
		}
		if key, _ := c.Locals(LocalIdemKey).(string); key != "" {
			return s.serveKeyed(r, key, run)
		}
		return run()
	}
}

// SiteParam is the {siteId} path parameter, unescaped: site ids taken from
// group paths hold "/", which URLs carry as %2F.
func SiteParam(c *fiber.Ctx) string { return UnescapedParam(c, "siteId") }

// UnescapedParam is a path parameter, percent-decoded. The result is
// always a copy: fasthttp reuses the request's buffer, and PathUnescape
// returns its input itself when there is nothing to unescape.
func UnescapedParam(c *fiber.Ctx, name string) string {
	v := c.Params(name)
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	return strings.Clone(v)
}

// refuseUnsupportedQuery refuses FormKiQ query parameters that name
// another object than the one the route answers for: versionKey (an
// earlier version of a document) on a route whose row does not take it
// (RouteFlags). Ignored, it would read, replace or delete the document
// itself instead. artifactId is refused the same way on the routes that
// do not take it (guard.go resolveDocument).
func (s *Env) refuseUnsupportedQuery(c *fiber.Ctx) error {
	if c.Query("versionKey") != "" && !s.Flags(c).VersionKey {
		return Invalid("versionKey", msgVersionKeyRoute)
	}
	return nil
}

// RouteFlags are what a row of the route table (server/routes.go) says a
// route takes and answers, as the request API reads them.
type RouteFlags struct {
	// ArtifactID, VersionKey, ShareKey: the route takes that query
	// parameter; every other route refuses it with 400.
	ArtifactID, VersionKey, ShareKey bool
	// Stored says what stored bytes the route answers with (stored.go).
	Stored string
}

// Flags are the route table's flags of the route c matched (HEAD as
// the GET it runs).
func (s *Env) Flags(c *fiber.Ctx) RouteFlags {
	if c.Route() == nil {
		return RouteFlags{}
	}
	return s.RouteFlags[queryRouteKey(c)]
}

// queryRouteKey is the route a request matched, as the route table's
// flags are indexed: "METHOD path", HEAD as the GET it runs (a HEAD
// answers as its GET would, folder check included).
func queryRouteKey(c *fiber.Ctx) string {
	m := c.Method()
	if m == fiber.MethodHead {
		m = fiber.MethodGet
	}
	return m + " " + c.Route().Path
}

func PathParam(r *Request, name string) string { return UnescapedParam(r.Ctx, name) }

// PublicCtx is the request context of a route that needs no token (the
// sign-in operations): it acts as the directory itself.
func (s *Env) PublicCtx(c *fiber.Ctx, user string) *Request {
	return &Request{Ctx: c, Principal: &auth.Principal{Username: user, Sites: map[string][]auth.Permission{}}, Now: s.Now().UTC()}
}
