package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/ratelimit"
	"quire/server/dav"
	"quire/server/internal/api"
	"quire/storage"
)

const (
	read   = auth.PermRead
	write  = auth.PermWrite
	del    = auth.PermDelete
	govern = auth.PermGovern
	noPerm = auth.Permission("")
)

// testRoutes, when set by a test, adds routes to every server built
// (export_test.go): a handler that panics on purpose, for one.
var testRoutes func(fiber.Router)

// errNotAdmin answers a caller outside the Admins group on an admin route.
var errNotAdmin = api.ErrStatus(http.StatusUnauthorized, "fkq access denied (Admins group required)")

// requireAdmin refuses h to callers outside the Admins group.
func requireAdmin(h api.Handler) api.Handler {
	return func(r *api.Request) error {
		if !r.Principal.Admin {
			return errNotAdmin
		}
		return h(r)
	}
}

// route is one row of the route table: a method and path (fiber's
// syntax), who may call it, and what the route takes and answers. Every
// per-route list is a field here: nothing else says which routes take
// artifactId, versionKey or shareKey, which answer stored bytes, which
// refuse an Idempotency-Key, which are refused on purpose
// (TestRoutes_NoSideLists).
type route struct {
	method, path string

	// A route that needs no token has a rate-limit class (ratelimits.go)
	// and a plain fiber handler.
	class  string
	public fiber.Handler

	// A route behind a token: where its site comes from, the site
	// permission Wrap checks (noPerm: none), and admins for the Admins
	// group only (requireAdmin).
	site   api.SiteFrom
	perm   auth.Permission
	admins bool
	h      api.Handler

	// Exactly-once writes (requestkeys.go; API.md "Exactly-once writes"):
	// every POST, PUT, PATCH and DELETE route honours an Idempotency-Key
	// unless unkeyed gives the reason it refuses one (400, never ignored);
	// a GET route honours it when writingRead (it creates the document it
	// answers an upload URL for). TestKeyedRoutes_EveryWriteRoute holds
	// them to the routes.
	unkeyed     string
	writingRead bool

	// The query parameters that name another object than the route's
	// own: artifactId (an artifact of the document, guard.go), versionKey
	// (an earlier version's content) and shareKey (acting through a folder
	// share). Every other route refuses them with 400.
	artifactID, versionKey, shareKey bool

	// stored says what stored bytes the route answers with (stored.go:
	// only such routes may, and only through ServeStored).
	stored string

	// refused is the reason a FormKiQ route is refused on purpose: 501
	// with it (refused.go).
	refused string
}

// routeOpt sets a flag of a row.
type routeOpt func(*route)

// Row constructors: public (no token), byQuery (site from ?siteId=),
// byPath (site from {siteId}), noSite, adminRoute (the Admins group
// only) and refusedRow.
func public(method, path, class string, h fiber.Handler, opts ...routeOpt) route {
	return row(route{method: method, path: path, class: class, public: h}, opts)
}

func byQuery(method, path string, perm auth.Permission, h api.Handler, opts ...routeOpt) route {
	return row(route{method: method, path: path, site: api.SiteQuery, perm: perm, h: h}, opts)
}

func byPath(method, path string, perm auth.Permission, h api.Handler, opts ...routeOpt) route {
	return row(route{method: method, path: path, site: api.SitePath, perm: perm, h: h}, opts)
}

func noSite(method, path string, h api.Handler, opts ...routeOpt) route {
	return row(route{method: method, path: path, site: api.SiteNone, perm: noPerm, h: h}, opts)
}

// adminRoute is a route of the Admins group only; anyone else gets
// FormKiQ's 401, as for too few permissions on a site.
func adminRoute(method, path string, h api.Handler, opts ...routeOpt) route {
	return row(route{method: method, path: path, site: api.SiteNone, perm: noPerm, admins: true, h: h}, opts)
}

// refusedRow is a FormKiQ route Quire refuses on purpose (refused.go).
func refusedRow(method, path, reason string) route {
	return route{method: method, path: path, site: api.SiteNone, perm: noPerm, h: notServed(reason), refused: reason}
}

func row(r route, opts []routeOpt) route {
	for _, o := range opts {
		o(&r)
	}
	return r
}

// The flags of a row.
func unkeyed(reason string) routeOpt { return func(r *route) { r.unkeyed = reason } }
func stored(what string) routeOpt    { return func(r *route) { r.stored = what } }

var (
	writingRead routeOpt = func(r *route) { r.writingRead = true }
	artifactID  routeOpt = func(r *route) { r.artifactID = true }
	versionKey  routeOpt = func(r *route) { r.versionKey = true }
	shareKey    routeOpt = func(r *route) { r.shareKey = true }
	admins      routeOpt = func(r *route) { r.admins = true }
)

// routes registers every route of the route table, so the whole API is
// visible in one place.
func (s *Server) routes() {
	a := s.app
	// recoverPanic runs inside accessLog, so a recovered panic is logged,
	// counted and drained like any other 500.
	a.Use(s.accessLog, s.recoverPanic, s.SafeHeaders, s.cors, s.refuseWhenDiverged, s.idempotencyKey, s.sessionIndex)

	rows := s.routeRows()
	s.rows = indexRows(rows)
	s.RouteFlags = routeFlags(rows)
	// No token: each route has a rate-limit class (ratelimits.go;
	// TestRateLimits_EveryPublicRoute finds a route left without one).
	// They are registered before the token check below.
	for _, rt := range rows {
		if rt.public != nil {
			s.publicRoute(rt.method, rt.path, rt.class, rt.public)
		}
	}
	authed := a.Group("", s.authenticate)
	for _, rt := range rows {
		if rt.public != nil {
			continue
		}
		h := rt.h
		if rt.admins {
			h = requireAdmin(h)
		}
		if rt.method == http.MethodGet && rt.refused == "" {
			authed.Get(rt.path, s.Wrap(rt.site, rt.perm, h)) // and HEAD
			continue
		}
		authed.Add(rt.method, rt.path, s.Wrap(rt.site, rt.perm, h))
	}

	// Anything else is FormKiQ's "request handler not found".
	if testRoutes != nil {
		testRoutes(a)
	}
	a.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
}

// indexRows indexes the rows by "METHOD path".
func indexRows(rows []route) map[string]*route {
	out := make(map[string]*route, len(rows))
	for i := range rows {
		out[routeKey(rows[i].method, rows[i].path)] = &rows[i]
	}
	return out
}

// routeFlags are the flags the request API reads per route (api.Env's
// RouteFlags), by "METHOD path".
func routeFlags(rows []route) map[string]api.RouteFlags {
	out := map[string]api.RouteFlags{}
	for _, rt := range rows {
		f := api.RouteFlags{ArtifactID: rt.artifactID, VersionKey: rt.versionKey, ShareKey: rt.shareKey, Stored: rt.stored}
		if f != (api.RouteFlags{}) {
			out[routeKey(rt.method, rt.path)] = f
		}
	}
	return out
}

// routeRows is the one route table: every route with its credential
// and flags, in registration order (fiber matches a request to the first
// route of its method whose pattern fits). Routes that need no token
// come first: they are registered before the token check.
func (s *Server) routeRows() []route {
	rows := []route{
		// No token: each route has a rate-limit class (ratelimits.go;
		// TestRateLimits_EveryPublicRoute finds a route left without one).
		// Health, and signed upload and download URLs (the signature is the
		// credential).
		public("GET", "/healthz", ratelimit.Probe, s.handleHealthz),
		public("GET", "/readyz", ratelimit.Probe, s.handleReadyz),
		public("GET", "/metrics", ratelimit.Probe, s.metricsHandler()),
		public("PUT", "/uploads/:siteId/:documentId", ratelimit.Links, s.content.HandlePutUpload, unkeyed("signed upload URL: no caller to scope a key by, and the body is streamed (not buffered to digest it); the URL names one document and its commit is applied once by a key of its own")),
		public("PUT", "/uploads/examine/:siteId/:id", ratelimit.Links, s.content.HandlePutExamine, unkeyed("signed upload URL: no caller, streamed body; it stores a file to examine, nothing else")),
		public("GET", "/archives/:siteId/:archiveId", ratelimit.Links, s.documents.HandleGetArchive, stored("a ZIP of stored documents (/documents/compress)")),
		public("GET", "/downloads/:siteId/:documentId", ratelimit.Links, s.content.HandleGetDownload, stored("signed download: a document's content, an artifact, an earlier version, a watermarked copy")),
		public("GET", "/published/:siteId/:documentId", ratelimit.Links, s.documents.HandleGetPublished, stored("a published copy")),
		// The web console's files (console.go): GET / (and /console) lead
		// to /console/.
		public("GET", "/", ratelimit.Console, s.handleConsoleRoot),
		public("GET", "/console/*", ratelimit.Console, s.handleConsole),
		// Branding logos as their own files (issue 47; API.md "Branding").
		public("GET", "/branding/logo", ratelimit.Console, s.admin.HandleGetLogo, stored("the global branding's logo")),
		public("GET", "/sites/:siteId/branding/logo", ratelimit.Console, s.admin.HandleGetSiteLogo, stored("a site's branding logo")),
		// Sign-in (FormKiQ's auth API) against the built-in directory.
		public("POST", "/login", ratelimit.SignIn, s.directory.HandleLogin, unkeyed("sign-in: answers fresh tokens, which are never recorded")),
		public("POST", "/login/refresh", ratelimit.Refresh, s.directory.HandleRefresh, unkeyed("sign-in: answers fresh tokens, which are never recorded")),
		public("POST", "/login/logout", ratelimit.Refresh, s.directory.HandleLogout),
		// Sign-in through the identity provider, for the console (oidc.go).
		public("GET", "/login/oidc/info", ratelimit.Refresh, s.directory.HandleOIDCInfo),
		public("GET", "/login/oidc", ratelimit.Refresh, s.directory.HandleOIDCStart),
		public("GET", "/login/oidc/callback", ratelimit.Refresh, s.directory.HandleOIDCCallback),
		public("POST", "/respondToAuthChallenge", ratelimit.SignIn, s.directory.HandleRespondToAuthChallenge, unkeyed("sign-in: answers fresh tokens, which are never recorded")),
		public("POST", "/changePassword", ratelimit.SignIn, s.directory.HandleChangePassword, unkeyed("sign-in: a credential change whose answer must not be replayed to another holder of the key")),
		public("POST", "/forgotPassword", ratelimit.Reset, s.directory.HandleForgotPassword, unkeyed("sign-in: no caller to scope a key by; it mails a code")),
		public("POST", "/forgotPasswordConfirm", ratelimit.SignIn, s.directory.HandleForgotPasswordConfirm, unkeyed("sign-in: no caller to scope a key by; the code is spent once anyway")),
		public("POST", "/confirmRegistration", ratelimit.SignIn, s.directory.HandleConfirmRegistration, unkeyed("sign-in: no caller to scope a key by; the code is spent once anyway")),
		// E-signature: the signing token is the credential (esign.go).
		public("GET", "/esign/:token", ratelimit.Signing, s.signatures.HandleSigningPage),
		public("POST", "/esign/:token", ratelimit.Signing, s.signatures.HandleSigningSubmit, unkeyed("signing page: no caller to scope a key by; a signature is taken once per recipient anyway")),
		public("GET", "/esign/:token/document", ratelimit.Signing, s.signatures.HandleSigningDocument, stored("the PDF an envelope was sent with")),
		public("GET", "/esign-status/:envelopeId", ratelimit.Signing, s.signatures.HandleEnvelopeStatusPage),
		// Short links: the slug is the credential, as for signed URLs.
		public("GET", "/s/:slug", ratelimit.Links, s.admin.HandleResolveShortlink),
		// Anonymous documents, where the site's configuration enables them.
		public("POST", "/public/documents", ratelimit.Public, s.documents.HandlePublicAddDocument, unkeyed("anonymous: no caller to scope a key by (one anonymous client could replay another's answer); send documentId to make a create repeatable")),
		// Public webhook intake: no token, only with webhooks.public set.
		public("POST", "/public/webhooks/*", ratelimit.Public, s.intake.HandlePublicWebhook, unkeyed("webhook intake: keeps FormKiQ's own per-webhook Idempotency-Key (webhooks.go)")),
		// The join token in the body is the credential (server/admin/cluster.go).
		public("POST", "/cluster/join", ratelimit.Cluster, s.admin.HandleClusterJoin, unkeyed("cluster join: no caller (the join token is the credential) and the token is spent once anyway")),
	}
	// WebDAV: Basic auth on every request, checked by the handler (server/dav).
	for _, m := range dav.Methods {
		var davStored []routeOpt
		if m == http.MethodGet {
			davStored = append(davStored, stored("WebDAV GET of a document"))
		}
		rows = append(rows, public(m, "/dav", ratelimit.Dav, s.dav.HandleDav), public(m, "/dav/*", ratelimit.Dav, s.dav.HandleDav, davStored...))
	}
	return append(rows, []route{
		// admin routes are the Admins group's only; anyone else gets
		// FormKiQ's 401, as for too few permissions on a site.

		noSite("GET", "/version", s.handleGetVersion),
		noSite("GET", "/sites", s.admin.HandleGetSites),
		adminRoute("GET", "/system/backup", s.admin.HandleGetBackup, stored("the backup stream (every document)")),
		adminRoute("GET", "/cluster/status", s.admin.HandleGetClusterStatus),
		adminRoute("GET", "/system/health", s.admin.HandleGetSystemHealth),
		adminRoute("POST", "/system/mail/test", s.admin.HandleServerMailTest, unkeyed("sends a test mail and changes no state: there is nothing to record, and a retry would mail again")),
		adminRoute("DELETE", "/cluster/nodes/:nodeId", s.admin.HandleDeleteClusterNode, unkeyed("cluster membership: a Raft configuration change, not a command, so no record can be kept with it; removing a node twice leaves the same configuration")),
		adminRoute("POST", "/cluster/nodes/:nodeId/rejoin", s.admin.HandleRejoinClusterNode, unkeyed("cluster membership: a Raft configuration change, not a command, so no record can be kept with it; readmitting a node twice leaves the same configuration")),
		adminRoute("POST", "/cluster/verify", s.admin.HandleVerifyCluster, unkeyed("a verification of the replicas: it writes only a digest mark, and a second one is a new verification")),
		adminRoute("POST", "/system/keys/rotate", s.admin.HandleRotateKeys),
		adminRoute("POST", "/system/secrets/rotate", s.admin.HandleRotateSecretsKey),
		noSite("GET", "/system/configuration", s.admin.HandleGetSystemConfig),
		adminRoute("PATCH", "/system/configuration", s.admin.HandleUpdateSystemConfig),
		adminRoute("GET", "/users", s.directory.HandleGetUsers),
		adminRoute("POST", "/users", s.directory.HandleAddUser),
		adminRoute("GET", "/users/:username", s.directory.HandleGetUser),
		adminRoute("DELETE", "/users/:username", s.directory.HandleDeleteUser),
		adminRoute("GET", "/users/:username/groups", s.directory.HandleGetUserGroups),
		adminRoute("PUT", "/users/:username/:userOperation", s.directory.HandleUserOperation),
		adminRoute("GET", "/groups", s.directory.HandleGetGroups),
		adminRoute("POST", "/groups", s.directory.HandleAddGroup),
		adminRoute("GET", "/groups/:groupName", s.directory.HandleGetGroup),
		adminRoute("DELETE", "/groups/:groupName", s.directory.HandleDeleteGroup),
		adminRoute("GET", "/groups/:groupName/users", s.directory.HandleGetGroupUsers),
		adminRoute("POST", "/groups/:groupName/users", s.directory.HandleAddGroupUser),
		adminRoute("DELETE", "/groups/:groupName/users/:username", s.directory.HandleRemoveGroupUser),
		noSite("GET", "/system/inferenceModels", s.admin.HandleGetInferenceModels),
		adminRoute("POST", "/system/inferenceModels/agreement", s.admin.HandleAgreeInferenceModel),
		adminRoute("POST", "/sites", s.admin.HandleAddSite),
		adminRoute("PATCH", "/sites/:siteId", s.admin.HandleUpdateSite),
		byPath("GET", "/sites/:siteId/groups", govern, s.directory.HandleGetSiteGroups),
		byPath("GET", "/sites/:siteId/groups/:groupName", govern, s.directory.HandleGetSiteGroup),
		byPath("DELETE", "/sites/:siteId/groups/:groupName", govern, s.directory.HandleDeleteSiteGroup, admins),
		byPath("PUT", "/sites/:siteId/groups/:groupName/permissions", govern, s.directory.HandleSetSiteGroupPermissions, admins),
		byPath("GET", "/sites/:siteId/eventSubscriptions", govern, s.admin.HandleGetEventSubs),
		byPath("POST", "/sites/:siteId/eventSubscriptions", govern, s.admin.HandleAddEventSub),
		byPath("GET", "/sites/:siteId/eventSubscriptions/:eventSubscriptionId", govern, s.admin.HandleGetEventSub),
		byPath("PATCH", "/sites/:siteId/eventSubscriptions/:eventSubscriptionId", govern, s.admin.HandleUpdateEventSub),
		byPath("DELETE", "/sites/:siteId/eventSubscriptions/:eventSubscriptionId", govern, s.admin.HandleDeleteEventSub),
		byPath("GET", "/sites/:siteId/locales", read, s.vocabulary.HandleGetLocales),
		byPath("POST", "/sites/:siteId/locales", govern, s.vocabulary.HandleAddLocale),
		byPath("DELETE", "/sites/:siteId/locales/:locale", govern, s.vocabulary.HandleDeleteLocale),
		byPath("GET", "/sites/:siteId/locales/:locale/resourceItems", read, s.vocabulary.HandleGetResourceItems),
		byPath("POST", "/sites/:siteId/locales/:locale/resourceItems", govern, s.vocabulary.HandleAddResourceItem),
		byPath("GET", "/sites/:siteId/locales/:locale/resourceItems/:itemKey", read, s.vocabulary.HandleGetResourceItem),
		byPath("PUT", "/sites/:siteId/locales/:locale/resourceItems/:itemKey", govern, s.vocabulary.HandleSetResourceItem),
		byPath("DELETE", "/sites/:siteId/locales/:locale/resourceItems/:itemKey", govern, s.vocabulary.HandleDeleteResourceItem),
		byPath("GET", "/sites/:siteId/savedSearches", read, s.search.HandleGetSavedSearches),
		byPath("POST", "/sites/:siteId/savedSearches", read, s.search.HandleAddSavedSearch),
		byPath("DELETE", "/sites/:siteId/savedSearches/:savedSearchId", read, s.search.HandleDeleteSavedSearch),
		byPath("GET", "/sites/:siteId/apiKeys", govern, s.admin.HandleGetAPIKeys),
		byPath("POST", "/sites/:siteId/apiKeys", govern, s.admin.HandleAddAPIKey),
		byPath("DELETE", "/sites/:siteId/apiKeys/:apiKey", govern, s.admin.HandleDeleteAPIKey),
		byPath("POST", "/sites/:siteId/delegationTokens", auth.PermAdmin, s.directory.HandleAddDelegationToken),

		byQuery("GET", "/documents", read, s.documents.HandleGetDocuments),
		byQuery("POST", "/documents", write, s.documents.HandleAddDocument, shareKey),
		byQuery("POST", "/documents/upload", write, s.documents.HandleAddDocumentUpload, shareKey),
		byQuery("POST", "/documents/compress", read, s.documents.HandleCompressDocuments),
		byQuery("GET", "/documents/upload", write, s.documents.HandleGetDocumentUpload, writingRead, shareKey),
		byQuery("PATCH", "/documents/tags", write, s.documents.HandleUpdateMatchingDocumentTags),
		byQuery("POST", "/documents/tags/batch", write, s.documents.HandleTagDocuments),
		byQuery("GET", "/documents/:documentId", read, s.documents.HandleGetDocument, artifactID, shareKey),
		byQuery("PATCH", "/documents/:documentId", write, s.documents.HandleUpdateDocument, artifactID, shareKey),
		byQuery("DELETE", "/documents/:documentId", del, s.documents.HandleDeleteDocument, artifactID),
		byQuery("PUT", "/documents/:documentId/restore", write, s.documents.HandleRestoreDocument),
		byQuery("DELETE", "/documents/:documentId/purge", del, s.documents.HandlePurgeDocument, artifactID),
		byQuery("GET", "/documents/:documentId/upload", write, s.content.HandleGetDocumentIDUpload, artifactID, shareKey),
		byQuery("GET", "/documents/:documentId/content", read, s.content.HandleGetDocumentContent, artifactID, versionKey, shareKey),
		byQuery("GET", "/documents/:documentId/url", read, s.content.HandleGetDocumentURL, artifactID, versionKey, shareKey),
		byQuery("GET", "/documents/:documentId/artifacts", read, s.documents.HandleGetDocumentArtifacts),
		byQuery("GET", "/documents/:documentId/versions", read, s.documents.HandleGetDocumentVersions, artifactID, shareKey),
		byQuery("PUT", "/documents/:documentId/versions", write, s.documents.HandleSetDocumentVersion, artifactID),
		byQuery("DELETE", "/documents/:documentId/versions/:versionKey", del, s.documents.HandleDeleteDocumentVersion, artifactID, shareKey),
		byQuery("PUT", "/documents/:documentId/artifacts/promoteArtifact", write, s.documents.HandlePromoteArtifact),
		byQuery("GET", "/documents/:documentId/userActivities", read, s.flow.HandleGetDocumentActivities, artifactID),
		byQuery("GET", "/userActivities", read, s.flow.HandleGetUserActivities),
		byQuery("GET", "/activities", read, s.flow.HandleGetActivities, artifactID),
		byQuery("GET", "/userNotifications", read, s.flow.HandleGetUserNotifications),
		byQuery("POST", "/documents/:documentId/generate", write, s.signatures.HandleGenerateDocument, artifactID),
		byQuery("POST", "/documents/:documentId/certifications", write, s.signatures.HandleAddCertification, artifactID),
		byPath("GET", "/sites/:siteId/secrets", govern, s.signatures.HandleGetSecrets),
		byPath("POST", "/sites/:siteId/secrets", govern, s.signatures.HandleAddSecret),
		byPath("DELETE", "/sites/:siteId/secrets/:alias", govern, s.signatures.HandleDeleteSecret),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes", write, s.signatures.HandleAddEnvelope, artifactID),
		byQuery("GET", "/esignature/:provider/:documentId/envelopes", read, s.signatures.HandleGetEnvelopes),
		byQuery("GET", "/esignature/:provider/:documentId/envelopes/:envelopeId", read, s.signatures.HandleGetEnvelope),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes/:envelopeId/send", write, s.signatures.HandleSendEnvelope),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes/:envelopeId/views/recipient", write, s.signatures.HandleRecipientView),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes/:envelopeId/views/sender", read, s.signatures.HandleSenderView),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes/:envelopeId/reminders", write, s.signatures.HandleEnvelopeReminders),
		byQuery("POST", "/esignature/:provider/:documentId/envelopes/:envelopeId/void", write, s.signatures.HandleVoidEnvelope),
		byQuery("POST", "/esignature/:provider/events", write, s.signatures.HandleEnvelopeEvents),
		byQuery("PUT", "/documents/:documentId/checkout", write, s.documents.HandleSetLock(storage.LockCheckout, false), artifactID),
		byQuery("DELETE", "/documents/:documentId/checkout", write, s.documents.HandleSetLock(storage.LockCheckout, true), artifactID),
		byQuery("PUT", "/documents/:documentId/legalHold", govern, s.documents.HandleSetLock(storage.LockLegalHold, false), artifactID),
		byQuery("DELETE", "/documents/:documentId/legalHold", govern, s.documents.HandleSetLock(storage.LockLegalHold, true), artifactID),

		byQuery("GET", "/documents/:documentId/actions", read, s.flow.HandleGetDocumentActions, artifactID, shareKey),
		byQuery("POST", "/documents/:documentId/actions", write, s.flow.HandleAddDocumentActions, artifactID),
		byQuery("GET", "/documents/:documentId/reviews", read, s.flow.HandleGetReviews, artifactID),
		byQuery("POST", "/documents/:documentId/reviews", write, s.flow.HandleAddReview, artifactID),
		byQuery("GET", "/documents/:documentId/reviews/:reviewId", read, s.flow.HandleGetReview, artifactID),
		byQuery("PATCH", "/documents/:documentId/reviews/:reviewId", write, s.flow.HandleUpdateReview, artifactID),
		byQuery("GET", "/documents/:documentId/reviews/:reviewId/decisions", read, s.flow.HandleGetReviewDecisions, artifactID),
		byQuery("POST", "/documents/:documentId/reviews/:reviewId/decisions", write, s.flow.HandleAddReviewDecision, artifactID),
		byQuery("GET", "/reviews", read, s.flow.HandleGetOpenReviews),
		byQuery("GET", "/documents/:documentId/notes", read, s.flow.HandleGetNotes),
		byQuery("POST", "/documents/:documentId/notes", write, s.flow.HandleAddNote),
		byQuery("DELETE", "/documents/:documentId/notes/:noteId", del, s.flow.HandleDeleteNote),
		byQuery("POST", "/documents/:documentId/actions/retry", write, s.flow.HandleRetryDocumentActions, artifactID),
		byQuery("GET", "/documents/:documentId/fulltext", read, s.flow.HandleGetDocumentFulltext, artifactID, shareKey),
		byQuery("PUT", "/documents/:documentId/fulltext", write, s.search.HandleSetDocumentFulltext),
		byQuery("POST", "/documents/:documentId/fulltext", write, s.search.HandleSetDocumentFulltext),
		byQuery("PATCH", "/documents/:documentId/fulltext", write, s.search.HandleUpdateDocumentFulltext),
		byQuery("DELETE", "/documents/:documentId/fulltext", del, s.search.HandleDeleteDocumentFulltext),
		byQuery("DELETE", "/documents/:documentId/fulltext/tags/:tagKey", del, s.search.HandleDeleteDocumentFulltextTag, shareKey),
		byQuery("DELETE", "/documents/:documentId/fulltext/tags/:tagKey/:tagValue", del, s.search.HandleDeleteDocumentFulltextTag, shareKey),
		byQuery("GET", "/documents/:documentId/ocr", read, s.flow.HandleGetDocumentOcr, artifactID, shareKey),
		byQuery("GET", "/documents/:documentId/malwareScan", read, s.flow.HandleGetMalwareScan, artifactID),
		byQuery("PUT", "/documents/:documentId/malwareScan", write, s.flow.AddActionFor("MALWARE_SCAN", "Malware scan request submitted"), artifactID),
		byQuery("PUT", "/documents/:documentId/antivirus", write, s.flow.AddActionFor("ANTIVIRUS", "Antivirus request submitted"), artifactID, shareKey),
		byQuery("POST", "/documents/:documentId/ocr", write, s.flow.AddActionFor("OCR", "OCR request submitted"), artifactID),
		byQuery("PUT", "/documents/:documentId/ocr", write, s.documents.HandleSetDocumentOcr),
		byQuery("DELETE", "/documents/:documentId/ocr", del, s.documents.HandleDeleteDocumentOcr),
		byQuery("GET", "/documents/:documentId/syncs", read, s.documents.HandleGetDocumentSyncs, shareKey),
		byQuery("POST", "/documents/:documentId/syncs", write, s.documents.HandleAddDocumentSync),
		byQuery("POST", "/reindex/documents/:documentId", write, s.documents.HandleReindexDocument),
		byQuery("GET", "/publications/:documentId", read, s.documents.HandleGetPublication),
		byQuery("DELETE", "/publications/:documentId", del, s.documents.HandleDeletePublication),
		byQuery("GET", "/queues", read, s.flow.HandleGetQueues),
		byQuery("POST", "/queues", govern, s.flow.HandleAddQueue),
		byQuery("GET", "/queues/:queueId", read, s.flow.HandleGetQueue),
		byQuery("DELETE", "/queues/:queueId", govern, s.flow.HandleDeleteQueue),
		byQuery("GET", "/queues/:queueId/documents", read, s.flow.HandleGetQueueDocuments),
		byQuery("POST", "/queues/:queueId/documents/:documentId/decisions", write, s.flow.HandleQueueDecision),
		// Workflows and rulesets (workflows.go, rulesets.go): definitions are
		// site settings (GOVERN to write); documents enter with WRITE.
		byQuery("GET", "/workflows", read, s.flow.HandleGetWorkflows),
		byQuery("POST", "/workflows", govern, s.flow.HandleAddWorkflow),
		byQuery("GET", "/workflows/:workflowId", read, s.flow.HandleGetWorkflow),
		byQuery("PUT", "/workflows/:workflowId", govern, s.flow.HandleSetWorkflow),
		byQuery("PATCH", "/workflows/:workflowId", govern, s.flow.HandleUpdateWorkflow),
		byQuery("DELETE", "/workflows/:workflowId", govern, s.flow.HandleDeleteWorkflow),
		byQuery("GET", "/workflows/:workflowId/documents", read, s.flow.HandleGetWorkflowDocuments),
		byQuery("GET", "/documents/:documentId/workflows", read, s.flow.HandleGetDocumentWorkflows),
		byQuery("POST", "/documents/:documentId/workflows", write, s.flow.HandleAddDocumentWorkflow),
		byQuery("GET", "/documents/:documentId/workflows/:workflowId", read, s.flow.HandleGetDocumentWorkflow),
		byQuery("POST", "/documents/:documentId/workflow/:workflowId/decisions", write, s.flow.HandleWorkflowDecision),
		byQuery("GET", "/rulesets", read, s.flow.HandleGetRulesets),
		byQuery("POST", "/rulesets", govern, s.flow.HandleAddRuleset),
		byQuery("GET", "/rulesets/:rulesetId", read, s.flow.HandleGetRuleset),
		byQuery("PATCH", "/rulesets/:rulesetId", govern, s.flow.HandleUpdateRuleset),
		byQuery("DELETE", "/rulesets/:rulesetId", govern, s.flow.HandleDeleteRuleset),
		byQuery("GET", "/rulesets/:rulesetId/rules", read, s.flow.HandleGetRules),
		byQuery("POST", "/rulesets/:rulesetId/rules", govern, s.flow.HandleAddRule),
		byQuery("GET", "/rulesets/:rulesetId/rules/:ruleId", read, s.flow.HandleGetRule),
		byQuery("PATCH", "/rulesets/:rulesetId/rules/:ruleId", govern, s.flow.HandleUpdateRule),
		byQuery("DELETE", "/rulesets/:rulesetId/rules/:ruleId", govern, s.flow.HandleDeleteRule),
		byPath("GET", "/sites/:siteId/configuration", govern, s.admin.HandleGetSiteConfig),
		byPath("PATCH", "/sites/:siteId/configuration", govern, s.admin.HandleUpdateSiteConfig),
		byPath("POST", "/sites/:siteId/configuration/notification/test", govern, s.admin.HandleNotificationTest, unkeyed("sends a test mail and changes no state: there is nothing to record, and a retry would mail again")),
		byQuery("GET", "/documents/:documentId/notifications", read, s.flow.HandleGetDocumentNotifications),
		byQuery("GET", "/documents/:documentId/ai/prompts", read, s.flow.ResultList("aiPrompt", "aiPromptResults", false)),
		byQuery("GET", "/documents/:documentId/ai/prompts/:llmPromptEntityName", read, s.flow.ResultList("aiPrompt", "aiPromptResults", true)),
		byQuery("GET", "/documents/:documentId/dataClassification", read, s.flow.ResultList("dataClassification", "dataClassifications", false)),
		byQuery("GET", "/documents/:documentId/metadataExtractionResults", read, s.flow.ResultList("metadataExtraction", "metadataExtractions", false)),
		byQuery("GET", "/documents/:documentId/metadataExtractionResults/:llmPromptEntityName", read, s.flow.ResultList("metadataExtraction", "metadataExtractions", true)),

		byQuery("GET", "/documents/:documentId/tags", read, s.documents.HandleGetDocumentTags, artifactID, shareKey),
		byQuery("POST", "/documents/:documentId/tags", write, s.documents.HandleAddDocumentTags, artifactID),
		byQuery("PUT", "/documents/:documentId/tags", write, s.documents.HandleSetDocumentTags, artifactID),
		byQuery("PATCH", "/documents/:documentId/tags", write, s.documents.HandleUpdateDocumentTags, artifactID),
		byQuery("GET", "/documents/:documentId/tags/:tagKey", read, s.documents.HandleGetDocumentTag, artifactID, shareKey),
		byQuery("PUT", "/documents/:documentId/tags/:tagKey", write, s.documents.HandleSetDocumentTag, artifactID),
		byQuery("DELETE", "/documents/:documentId/tags/:tagKey", del, s.documents.HandleDeleteDocumentTag, artifactID),
		byQuery("DELETE", "/documents/:documentId/tags/:tagKey/:tagValue", del, s.documents.HandleDeleteDocumentTagAndValue, artifactID, shareKey),

		byQuery("GET", "/attributes", read, s.documents.HandleGetAttributes),
		byQuery("POST", "/attributes", write, s.documents.HandleAddAttribute),
		byQuery("GET", "/attributes/:key", read, s.documents.HandleGetAttribute),
		byQuery("PATCH", "/attributes/:key", write, s.documents.HandleUpdateAttribute),
		byQuery("DELETE", "/attributes/:key", del, s.documents.HandleDeleteAttribute),
		byQuery("GET", "/attributes/:key/allowedValues", read, s.documents.HandleGetAttributeAllowedValues),

		byQuery("GET", "/documents/:documentId/attributes", read, s.documents.HandleGetDocumentAttributes, artifactID),
		byQuery("POST", "/documents/:documentId/attributes", write, s.documents.HandleAddDocumentAttributes, artifactID),
		byQuery("PUT", "/documents/:documentId/attributes", write, s.documents.HandleSetDocumentAttributes, artifactID),
		byQuery("GET", "/documents/:documentId/attributes/:attributeKey", read, s.documents.HandleGetDocumentAttribute, artifactID),
		byQuery("PUT", "/documents/:documentId/attributes/:attributeKey", write, s.documents.HandleSetDocumentAttributeValue, artifactID),
		byQuery("DELETE", "/documents/:documentId/attributes/:attributeKey", del, s.documents.HandleDeleteDocumentAttribute, artifactID),
		byQuery("DELETE", "/documents/:documentId/attributes/:attributeKey/:attributeValue", del, s.documents.HandleDeleteDocumentAttribute, artifactID),

		byPath("GET", "/sites/:siteId/schema/document", read, s.vocabulary.HandleGetSitesSchema),
		byPath("PUT", "/sites/:siteId/schema/document", govern, s.vocabulary.HandleSetSitesSchema),
		byPath("GET", "/sites/:siteId/schema/document/attributes/:key/allowedValues", read, s.vocabulary.HandleGetSitesSchemaAllowedValues),
		byPath("GET", "/sites/:siteId/classifications", read, s.vocabulary.HandleGetClassifications),
		byPath("POST", "/sites/:siteId/classifications", govern, s.vocabulary.HandleAddClassification),
		byPath("GET", "/sites/:siteId/classifications/:classificationId", read, s.vocabulary.HandleGetClassification),
		byPath("PUT", "/sites/:siteId/classifications/:classificationId", govern, s.vocabulary.HandleSetClassification),
		byPath("DELETE", "/sites/:siteId/classifications/:classificationId", govern, s.vocabulary.HandleDeleteClassification),
		byPath("GET", "/sites/:siteId/classifications/:classificationId/attributes/:key/allowedValues", read, s.vocabulary.HandleGetClassificationAllowedValues),

		byQuery("GET", "/entityTypes", read, s.vocabulary.HandleGetEntityTypes),
		byQuery("POST", "/entityTypes", write, s.vocabulary.HandleAddEntityType),
		byQuery("GET", "/entityTypes/:entityTypeId", read, s.vocabulary.HandleGetEntityType),
		byQuery("PUT", "/entityTypes/:entityTypeId", write, s.vocabulary.HandleSetEntityType),
		byQuery("DELETE", "/entityTypes/:entityTypeId", del, s.vocabulary.HandleDeleteEntityType),
		byQuery("GET", "/entities/:entityTypeId", read, s.vocabulary.HandleGetEntities),
		byQuery("POST", "/entities/:entityTypeId", write, s.vocabulary.HandleAddEntity),
		byQuery("GET", "/entities/:entityTypeId/:entityId", read, s.vocabulary.HandleGetEntity),
		byQuery("PUT", "/entities/:entityTypeId/:entityId", write, s.vocabulary.HandleSetEntity),
		byQuery("PATCH", "/entities/:entityTypeId/:entityId", write, s.vocabulary.HandleUpdateEntity),
		byQuery("DELETE", "/entities/:entityTypeId/:entityId", del, s.vocabulary.HandleDeleteEntity),
		byQuery("DELETE", "/entities/:entityTypeId/:entityId/attributes/:attributeKey", del, s.vocabulary.HandleDeleteEntity),

		byQuery("POST", "/search", read, s.search.HandleSearch),
		byQuery("POST", "/searchFulltext", read, s.search.HandleSearchFulltext),
		byQuery("POST", "/queryFulltext", read, s.search.HandleQueryFulltext),
		byQuery("GET", "/folders", read, s.search.HandleGetFolders, shareKey),
		byQuery("POST", "/folders", write, s.search.HandleAddFolder, shareKey),
		byQuery("DELETE", "/folders/:indexKey", del, s.search.HandleDeleteFolder, shareKey),
		byQuery("POST", "/indices/search", read, s.search.HandleIndexSearch),
		byQuery("DELETE", "/indices/:indexType/:indexKey", del, s.search.HandleDeleteFolder),
		byQuery("POST", "/indices/:indexType/move", write, s.search.HandleIndexFolderMove),
		byQuery("POST", "/folders/:indexKey/moves", write, s.search.HandleMoveFolder),
		byQuery("GET", "/folders/:indexKey/permissions", read, s.search.HandleGetFolderPermissions),
		noSite("GET", "/shares", s.search.HandleGetShares),
		byQuery("POST", "/shares/folders/:indexKey", govern, s.search.HandleAddFolderShare),
		noSite("DELETE", "/shares/:shareKey", s.search.HandleDeleteShare),
		byQuery("PUT", "/folders/permissions", govern, s.search.HandleSetFolderPermissions),

		byQuery("GET", "/mappings", read, s.vocabulary.HandleGetMappings),
		byQuery("POST", "/mappings", govern, s.vocabulary.HandleAddMapping),
		byQuery("GET", "/mappings/:mappingId", read, s.vocabulary.HandleGetMapping),
		byQuery("PUT", "/mappings/:mappingId", govern, s.vocabulary.HandleSetMapping),
		byQuery("DELETE", "/mappings/:mappingId", govern, s.vocabulary.HandleDeleteMapping),

		// Webhooks: managed by site governors (SERVICE-SPEC.md §5.2).
		byQuery("GET", "/webhooks", govern, s.intake.HandleGetWebhooks),
		byQuery("POST", "/webhooks", govern, s.intake.HandleAddWebhook),
		byQuery("GET", "/webhooks/:webhookId", govern, s.intake.HandleGetWebhook),
		byQuery("PATCH", "/webhooks/:webhookId", govern, s.intake.HandleUpdateWebhook),
		byQuery("DELETE", "/webhooks/:webhookId", govern, s.intake.HandleDeleteWebhook),
		byQuery("GET", "/webhooks/:webhookId/tags", govern, s.intake.HandleGetWebhookTags),
		byQuery("POST", "/webhooks/:webhookId/tags", govern, s.intake.HandleAddWebhookTag),
		byQuery("POST", "/private/webhooks/*", write, s.intake.HandlePrivateWebhook, unkeyed("webhook intake: keeps FormKiQ's own per-webhook Idempotency-Key (webhooks.go)")),
		byQuery("GET", "/objects/examine/pdf", write, s.content.HandleGetExaminePdfURL),
		byQuery("GET", "/objects/examine/:id/pdf", read, s.content.HandleGetExaminePdf),
		byQuery("POST", "/shortlinks", write, s.admin.HandleAddShortlink),
		byQuery("DELETE", "/shortlinks/:slug", write, s.admin.HandleDeleteShortlink),

		// Numbering sequences (Quire's own API, see API.md).
		byPath("GET", "/sites/:siteId/sequences", read, s.vocabulary.HandleGetSequences),
		byPath("POST", "/sites/:siteId/sequences", govern, s.vocabulary.HandleAddSequence),
		byPath("GET", "/sites/:siteId/sequences/:sequenceId", read, s.vocabulary.HandleGetSequence),
		byPath("DELETE", "/sites/:siteId/sequences/:sequenceId", govern, s.vocabulary.HandleDeleteSequence),
		byPath("POST", "/sites/:siteId/sequences/:sequenceId/next", write, s.vocabulary.HandleNextSequenceValue),

		// FormKiQ routes Quire refuses on purpose: 501 with the reason
		// (refused.go).
		refusedRow("GET", "/sites/opa/accessPolicies", reasonOPA),
		refusedRow("GET", "/sites/:siteId/opa/accessPolicy", reasonOPA),
		refusedRow("GET", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA),
		refusedRow("PUT", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA),
		refusedRow("DELETE", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA),
		refusedRow("GET", "/sites/global/opensearch/indices", reasonOpenSearch),
		refusedRow("DELETE", "/sites/global/opensearch/indices/:indexName", reasonOpenSearch),
		refusedRow("GET", "/sites/global/opensearch/snapshotRepositories", reasonOpenSearch),
		refusedRow("POST", "/sites/global/opensearch/snapshotRepositories/:repositoryName/cleanup", reasonOpenSearch),
		refusedRow("GET", "/sites/:siteId/opensearch/index", reasonOpenSearch),
		refusedRow("PUT", "/sites/:siteId/opensearch/index", reasonOpenSearch),
		refusedRow("DELETE", "/sites/:siteId/opensearch/index", reasonOpenSearch),
		refusedRow("GET", "/sites/:siteId/opensearch/indices", reasonOpenSearch),
		refusedRow("PUT", "/sites/:siteId/opensearch/indices", reasonOpenSearch),
		refusedRow("GET", "/sites/:siteId/opensearch/snapshotRepository", reasonOpenSearch),
		refusedRow("DELETE", "/sites/:siteId/opensearch/snapshotRepository", reasonOpenSearch),
		refusedRow("GET", "/sites/:siteId/opensearch/snapshots", reasonOpenSearch),
		refusedRow("GET", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch),
		refusedRow("POST", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch),
		refusedRow("DELETE", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch),
		refusedRow("POST", "/sites/:siteId/opensearch/snapshots/:snapshotName/restore", reasonOpenSearch),
		refusedRow("DELETE", "/sites/:siteId/opensearch/snapshots/:snapshotName/restore", reasonOpenSearch),
		refusedRow("POST", "/integrations/google/drive/documents/:documentId/export", reasonGoogleDrive),
		refusedRow("POST", "/documents/:documentId/ai/prompts/:llmPromptEntityName", reasonAIRoute),
		refusedRow("POST", "/documents/:documentId/metadataExtractionResults/:llmPromptEntityName", reasonAIRoute),
		refusedRow("PUT", "/documents/:documentId/dataClassification", reasonAIRoute),
		// Scanner intake (Quire's own API, see API.md "Scanner intake").
		byPath("GET", "/sites/:siteId/intakeProfiles", govern, s.intake.HandleGetIntakeProfiles),
		byPath("POST", "/sites/:siteId/intakeProfiles", govern, s.intake.HandleAddIntakeProfile),
		byPath("GET", "/sites/:siteId/intakeProfiles/:name", govern, s.intake.HandleGetIntakeProfile),
		byPath("PUT", "/sites/:siteId/intakeProfiles/:name", govern, s.intake.HandleSetIntakeProfile),
		byPath("DELETE", "/sites/:siteId/intakeProfiles/:name", govern, s.intake.HandleDeleteIntakeProfile),
		byPath("GET", "/sites/:siteId/intakeProfiles/:name/errors", govern, s.intake.HandleGetIntakeErrors),
		byPath("POST", "/sites/:siteId/intakeProfiles/:name/test", govern, s.intake.HandleTestIntakeProfile, unkeyed("a test of a watched folder and a mail listener: it writes no state, and a repeat tests again")),
		byPath("POST", "/sites/:siteId/intake/:name", write, s.intake.HandlePostIntake),
	}...)
}
