package server

import (
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/storage"
)

// The activity trail (API.md "Activity trail"; storage/activity.go):
// GET /documents/{id}/userActivities and GET /userActivities.

// via is where a request's commands come from, stored with each command.
func via(r *reqCtx) *storage.Via {
	v := &storage.Via{RequestID: requestID(r.Ctx), Source: storage.SourceUser}
	switch {
	case r.public:
		v.Source = storage.SourcePublic
	case r.p == nil:
	case r.p.Delegation != nil:
		v.Source, v.Actor, v.Reason = storage.SourceDelegation, r.p.Delegation.Actor, r.p.Delegation.Reason
	case r.p.APIKeySite != "":
		v.Source, v.Actor = storage.SourceAPIKey, r.p.APIKeyName
	case strings.HasPrefix(r.user(), "webhook/"):
		v.Source = storage.SourceWebhook
	}
	v.Govern = r.p != nil && r.p.Can(r.site, auth.PermGovern)
	return v
}

// docID is the id of the record the request acts on: the path's document,
// or the artifact named by artifactId (resolveDocument).
func (r *reqCtx) docID() string {
	if r.art != "" {
		return r.art
	}
	return r.pathDocID()
}

// pathDocID is the {documentId} of the path.
func (r *reqCtx) pathDocID() string { return strings.Clone(r.Params("documentId")) }

const (
	localRequestID = "requestId"
	localPrincipal = "principal"
	localBody      = "body"
)

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

// routeName is the matched route template (never the raw path, which can
// hold document ids or names).
func routeName(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" {
		return r.Path
	}
	return "unmatched"
}

// checkURLText refuses a request whose path parameters or query values
// are not valid UTF-8 once percent-decoded: they would reach storage, the
// index or an answer as U+FFFD, a silent change of what the client sent.
func checkURLText(c *fiber.Ctx) error {
	if p, err := url.PathUnescape(string(c.Request().URI().PathOriginal())); err == nil && !utf8.ValidString(p) {
		return invalid("path", "the request path is not valid UTF-8")
	}
	var bad string
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if bad == "" && !(utf8.Valid(k) && utf8.Valid(v)) {
			bad = strings.ToValidUTF8(string(k), "?")
		}
	})
	if bad != "" {
		return invalid(bad, "query parameter '"+bad+"' is not valid UTF-8")
	}
	return nil
}

// reqCtx is what a handler gets: the fiber context, the caller, the site
// the request acts on (already authorized) and the request time.
type reqCtx struct {
	*fiber.Ctx
	p    *auth.Principal
	site string
	now  time.Time
	// public marks an anonymous submission (POST /public/documents).
	public bool

	// pageTok, when set, replaces the request's `next` token (POST
	// /search walking pages for a `previous` link).
	pageTok *string

	// art is the artifactId the request acts on, checked to be an
	// artifact of the path's document (resolveDocument); docID() is then
	// the artifact's record id.
	art string

	// bodySum is the SHA-256 of the body (readBody, bufferBody);
	// implicitKey the key a client-chosen documentId stands for, used
	// by the request's create when it carries no Idempotency-Key
	// (requestkeys.go).
	bodySum     []byte
	implicitKey *storage.Idempotency

	// The site's folder permissions, read on first use.
	fperms   storage.FolderPermissionSet
	fpLoaded bool
	fpErr    bool

	// share is the folder share a request with shareKey acts through
	// (shares.go); shares are the site's shares naming the caller, read
	// on first use.
	share    *storage.Share
	shares   []storage.Share
	shLoaded bool
}

// pageToken is the paging token a search starts from.
func (r *reqCtx) pageToken() string {
	if r.pageTok != nil {
		return *r.pageTok
	}
	return r.Query("next")
}

// user is the caller's name as stored in userId fields.
func (r *reqCtx) user() string { return r.p.Username }

type handler func(r *reqCtx) error

// siteFrom says where a route takes its site id from.
type siteFrom int

const (
	siteQuery siteFrom = iota // ?siteId= with FormKiQ's fallback rules
	sitePath                  // the {siteId} path parameter
	siteNone                  // not site scoped (GET /sites, /version)
)

// wrap turns a handler into a fiber handler that resolves the site and
// checks that the caller holds perm on it.
func (s *env) wrap(from siteFrom, perm auth.Permission, h handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p, _ := c.Locals(localPrincipal).(*auth.Principal)
		if p == nil {
			return &auth.Error{Status: http.StatusUnauthorized, Msg: "Unauthorized"}
		}
		if err := checkURLText(c); err != nil {
			return err
		}
		r := &reqCtx{Ctx: c, p: p, now: s.now().UTC()}
		shareKey := strings.Clone(c.Query("shareKey"))
		if shareKey != "" && from != siteQuery {
			return invalid("shareKey", "'shareKey' is not supported on this route")
		}
		switch {
		case shareKey != "":
			if err := s.useShare(r, shareKey, perm); err != nil {
				return err
			}
		case from == siteQuery:
			site, err := p.SelectSite(strings.Clone(c.Query("siteId")))
			if err != nil {
				return err
			}
			r.site = site
		case from == sitePath:
			site := siteParam(c)
			if _, err := p.SelectSite(site); err != nil {
				return err
			}
			r.site = site
		}
		if from != siteNone && !storage.CheckSiteID(r.site) {
			return errStatus(http.StatusBadRequest, "invalid siteId")
		}
		if from != siteNone && perm != "" && r.share == nil {
			if err := p.Require(r.site, perm); err != nil {
				return err
			}
		}
		if err := refuseUnsupportedQuery(c); err != nil {
			return err
		}
		run := func() error {
			if err := s.resolveDocument(r, perm); err != nil {
				return err
			}
			return h(r)
		}
		if key, _ := c.Locals(localIdemKey).(string); key != "" {
			return s.serveKeyed(r, key, run)
		}
		return run()
	}
}

// siteParam is the {siteId} path parameter, unescaped: site ids taken from
// group paths hold "/", which URLs carry as %2F.
func siteParam(c *fiber.Ctx) string { return unescapedParam(c, "siteId") }

// unescapedParam is a path parameter, percent-decoded. The result is
// always a copy: fasthttp reuses the request's buffer, and PathUnescape
// returns its input itself when there is nothing to unescape.
func unescapedParam(c *fiber.Ctx, name string) string {
	v := c.Params(name)
	if u, err := url.PathUnescape(v); err == nil {
		v = u
	}
	return strings.Clone(v)
}

// refuseUnsupportedQuery refuses FormKiQ query parameters that name
// another object than the one the route answers for: versionKey (an
// earlier version of a document) outside versionKeyRoutes (versions.go).
// Ignored, it would read, replace or delete the document itself instead.
// artifactId is refused the same way on the routes that do not take it
// (artifactRoutes, artifacts.go).
func refuseUnsupportedQuery(c *fiber.Ctx) error {
	if c.Query("versionKey") != "" && !versionKeyRoutes[queryRouteKey(c)] {
		return invalid("versionKey", msgVersionKeyRoute)
	}
	return nil
}

// queryRouteKey is the route a request matched as artifactRoutes and
// versionKeyRoutes name it: "METHOD path", HEAD as the GET it runs (a
// HEAD answers as its GET would, folder check included).
func queryRouteKey(c *fiber.Ctx) string {
	m := c.Method()
	if m == fiber.MethodHead {
		m = fiber.MethodGet
	}
	return m + " " + c.Route().Path
}

func pathParam(r *reqCtx, name string) string { return unescapedParam(r.Ctx, name) }

// publicCtx is the request context of a route that needs no token (the
// sign-in operations): it acts as the directory itself.
func (s *env) publicCtx(c *fiber.Ctx, user string) *reqCtx {
	return &reqCtx{Ctx: c, p: &auth.Principal{Username: user, Sites: map[string][]auth.Permission{}}, now: s.now().UTC()}
}
