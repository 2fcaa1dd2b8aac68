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

// Exactly-once writes (requestkeys.go; API.md "Exactly-once writes"):
// every POST, PUT, PATCH and DELETE route below honours an
// Idempotency-Key, and so do the GET routes of writingReads; the routes
// of unkeyedRoutes refuse it with a 400, never ignore it, for the reason
// each gives. TestKeyedRoutes_EveryWriteRoute holds the lists to the
// routes.
var unkeyedRoutes = map[string]string{
	"PUT /uploads/:siteId/:documentId":                    "signed upload URL: no caller to scope a key by, and the body is streamed (not buffered to digest it); the URL names one document and its commit is applied once by a key of its own",
	"PUT /uploads/examine/:siteId/:id":                    "signed upload URL: no caller, streamed body; it stores a file to examine, nothing else",
	"POST /login":                                         "sign-in: answers fresh tokens, which are never recorded",
	"POST /login/refresh":                                 "sign-in: answers fresh tokens, which are never recorded",
	"POST /respondToAuthChallenge":                        "sign-in: answers fresh tokens, which are never recorded",
	"POST /changePassword":                                "sign-in: a credential change whose answer must not be replayed to another holder of the key",
	"POST /forgotPassword":                                "sign-in: no caller to scope a key by; it mails a code",
	"POST /forgotPasswordConfirm":                         "sign-in: no caller to scope a key by; the code is spent once anyway",
	"POST /confirmRegistration":                           "sign-in: no caller to scope a key by; the code is spent once anyway",
	"POST /esign/:token":                                  "signing page: no caller to scope a key by; a signature is taken once per recipient anyway",
	"POST /public/documents":                              "anonymous: no caller to scope a key by (one anonymous client could replay another's answer); send documentId to make a create repeatable",
	"POST /public/webhooks/*":                             "webhook intake: keeps FormKiQ's own per-webhook Idempotency-Key (webhooks.go)",
	"POST /private/webhooks/*":                            "webhook intake: keeps FormKiQ's own per-webhook Idempotency-Key (webhooks.go)",
	"DELETE /cluster/nodes/:nodeId":                       "cluster membership: a Raft configuration change, not a command, so no record can be kept with it; removing a node twice leaves the same configuration",
	"POST /cluster/nodes/:nodeId/rejoin":                  "cluster membership: a Raft configuration change, not a command, so no record can be kept with it; readmitting a node twice leaves the same configuration",
	"POST /sites/:siteId/configuration/notification/test": "sends a test mail and changes no state: there is nothing to record, and a retry would mail again",
	"POST /cluster/join":                                  "cluster join: no caller (the join token is the credential) and the token is spent once anyway",
	"POST /cluster/verify":                                "a verification of the replicas: it writes only a digest mark, and a second one is a new verification",
}

// writingReads are the GET routes that change state (they create the
// document they answer an upload URL for): they honour the key as the
// write routes do.
var writingReads = map[string]bool{
	"GET /documents/upload": true,
}

// routes registers every route, so the whole API is visible in one place.
func (s *Server) routes() {
	a := s.app
	// recoverPanic runs inside accessLog, so a recovered panic is logged,
	// counted and drained like any other 500.
	a.Use(s.accessLog, s.recoverPanic, s.SafeHeaders, s.cors, s.refuseWhenDiverged, s.idempotencyKey, s.sessionIndex)

	// No token: each route has a rate-limit class (ratelimits.go;
	// TestRateLimits_EveryPublicRoute finds a route left without one).
	// Health, and signed upload and download URLs (the signature is the
	// credential).
	pub := s.publicRoute
	pub("GET", "/healthz", ratelimit.Probe, s.handleHealthz)
	pub("GET", "/readyz", ratelimit.Probe, s.handleReadyz)
	pub("GET", "/metrics", ratelimit.Probe, s.metricsHandler())
	pub("PUT", "/uploads/:siteId/:documentId", ratelimit.Links, s.content.HandlePutUpload)
	pub("PUT", "/uploads/examine/:siteId/:id", ratelimit.Links, s.content.HandlePutExamine)
	pub("GET", "/archives/:siteId/:archiveId", ratelimit.Links, s.documents.HandleGetArchive)
	pub("GET", "/downloads/:siteId/:documentId", ratelimit.Links, s.content.HandleGetDownload)
	pub("GET", "/published/:siteId/:documentId", ratelimit.Links, s.documents.HandleGetPublished)
	// The web console's files (console.go): GET / (and /console) lead
	// to /console/.
	pub("GET", "/", ratelimit.Console, s.handleConsoleRoot)
	pub("GET", "/console/*", ratelimit.Console, s.handleConsole)
	// Sign-in (FormKiQ's auth API) against the built-in directory.
	pub("POST", "/login", ratelimit.SignIn, s.directory.HandleLogin)
	pub("POST", "/login/refresh", ratelimit.Refresh, s.directory.HandleRefresh)
	pub("POST", "/login/logout", ratelimit.Refresh, s.directory.HandleLogout)
	// Sign-in through the identity provider, for the console (oidc.go).
	pub("GET", "/login/oidc/info", ratelimit.Refresh, s.directory.HandleOIDCInfo)
	pub("GET", "/login/oidc", ratelimit.Refresh, s.directory.HandleOIDCStart)
	pub("GET", "/login/oidc/callback", ratelimit.Refresh, s.directory.HandleOIDCCallback)
	pub("POST", "/respondToAuthChallenge", ratelimit.SignIn, s.directory.HandleRespondToAuthChallenge)
	pub("POST", "/changePassword", ratelimit.SignIn, s.directory.HandleChangePassword)
	pub("POST", "/forgotPassword", ratelimit.Reset, s.directory.HandleForgotPassword)
	pub("POST", "/forgotPasswordConfirm", ratelimit.SignIn, s.directory.HandleForgotPasswordConfirm)
	pub("POST", "/confirmRegistration", ratelimit.SignIn, s.directory.HandleConfirmRegistration)
	// E-signature: the signing token is the credential (esign.go).
	pub("GET", "/esign/:token", ratelimit.Signing, s.signatures.HandleSigningPage)
	pub("POST", "/esign/:token", ratelimit.Signing, s.signatures.HandleSigningSubmit)
	pub("GET", "/esign/:token/document", ratelimit.Signing, s.signatures.HandleSigningDocument)
	pub("GET", "/esign-status/:envelopeId", ratelimit.Signing, s.signatures.HandleEnvelopeStatusPage)
	// Short links: the slug is the credential, as for signed URLs.
	pub("GET", "/s/:slug", ratelimit.Links, s.admin.HandleResolveShortlink)
	// Anonymous documents, where the site's configuration enables them.
	pub("POST", "/public/documents", ratelimit.Public, s.documents.HandlePublicAddDocument)
	// Public webhook intake: no token, only with webhooks.public set.
	pub("POST", "/public/webhooks/*", ratelimit.Public, s.intake.HandlePublicWebhook)
	// The join token in the body is the credential (server/admin/cluster.go).
	pub("POST", "/cluster/join", ratelimit.Cluster, s.admin.HandleClusterJoin)
	// WebDAV: Basic auth on every request, checked by the handler (server/dav).
	for _, m := range dav.Methods {
		pub(m, "/dav", ratelimit.Dav, s.dav.HandleDav)
		pub(m, "/dav/*", ratelimit.Dav, s.dav.HandleDav)
	}

	authed := a.Group("", s.authenticate)
	q := func(p auth.Permission, h api.Handler) fiber.Handler { return s.Wrap(api.SiteQuery, p, h) }
	sp := func(p auth.Permission, h api.Handler) fiber.Handler { return s.Wrap(api.SitePath, p, h) }
	none := func(h api.Handler) fiber.Handler { return s.Wrap(api.SiteNone, noPerm, h) }
	// admin routes are the Admins group's only; anyone else gets
	// FormKiQ's 401, as for too few permissions on a site.
	admin := func(h api.Handler) fiber.Handler { return s.Wrap(api.SiteNone, noPerm, requireAdmin(h)) }

	authed.Get("/version", none(s.handleGetVersion))
	authed.Get("/sites", none(s.admin.HandleGetSites))
	authed.Get("/system/backup", admin(s.admin.HandleGetBackup))
	authed.Get("/cluster/status", admin(s.admin.HandleGetClusterStatus))
	authed.Get("/system/health", admin(s.admin.HandleGetSystemHealth))
	authed.Delete("/cluster/nodes/:nodeId", admin(s.admin.HandleDeleteClusterNode))
	authed.Post("/cluster/nodes/:nodeId/rejoin", admin(s.admin.HandleRejoinClusterNode))
	authed.Post("/cluster/verify", admin(s.admin.HandleVerifyCluster))
	authed.Post("/system/keys/rotate", admin(s.admin.HandleRotateKeys))
	authed.Post("/system/secrets/rotate", admin(s.admin.HandleRotateSecretsKey))
	authed.Get("/system/configuration", none(s.admin.HandleGetSystemConfig))
	authed.Patch("/system/configuration", admin(s.admin.HandleUpdateSystemConfig))
	authed.Get("/users", admin(s.directory.HandleGetUsers))
	authed.Post("/users", admin(s.directory.HandleAddUser))
	authed.Get("/users/:username", admin(s.directory.HandleGetUser))
	authed.Delete("/users/:username", admin(s.directory.HandleDeleteUser))
	authed.Get("/users/:username/groups", admin(s.directory.HandleGetUserGroups))
	authed.Put("/users/:username/:userOperation", admin(s.directory.HandleUserOperation))
	authed.Get("/groups", admin(s.directory.HandleGetGroups))
	authed.Post("/groups", admin(s.directory.HandleAddGroup))
	authed.Get("/groups/:groupName", admin(s.directory.HandleGetGroup))
	authed.Delete("/groups/:groupName", admin(s.directory.HandleDeleteGroup))
	authed.Get("/groups/:groupName/users", admin(s.directory.HandleGetGroupUsers))
	authed.Post("/groups/:groupName/users", admin(s.directory.HandleAddGroupUser))
	authed.Delete("/groups/:groupName/users/:username", admin(s.directory.HandleRemoveGroupUser))
	authed.Get("/system/inferenceModels", none(s.admin.HandleGetInferenceModels))
	authed.Post("/system/inferenceModels/agreement", admin(s.admin.HandleAgreeInferenceModel))
	authed.Post("/sites", admin(s.admin.HandleAddSite))
	authed.Patch("/sites/:siteId", admin(s.admin.HandleUpdateSite))
	authed.Get("/sites/:siteId/groups", sp(govern, s.directory.HandleGetSiteGroups))
	authed.Get("/sites/:siteId/groups/:groupName", sp(govern, s.directory.HandleGetSiteGroup))
	authed.Delete("/sites/:siteId/groups/:groupName", sp(govern, requireAdmin(s.directory.HandleDeleteSiteGroup)))
	authed.Put("/sites/:siteId/groups/:groupName/permissions", sp(govern, requireAdmin(s.directory.HandleSetSiteGroupPermissions)))
	authed.Get("/sites/:siteId/eventSubscriptions", sp(govern, s.admin.HandleGetEventSubs))
	authed.Post("/sites/:siteId/eventSubscriptions", sp(govern, s.admin.HandleAddEventSub))
	authed.Get("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.admin.HandleGetEventSub))
	authed.Patch("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.admin.HandleUpdateEventSub))
	authed.Delete("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.admin.HandleDeleteEventSub))
	authed.Get("/sites/:siteId/locales", sp(read, s.vocabulary.HandleGetLocales))
	authed.Post("/sites/:siteId/locales", sp(govern, s.vocabulary.HandleAddLocale))
	authed.Delete("/sites/:siteId/locales/:locale", sp(govern, s.vocabulary.HandleDeleteLocale))
	authed.Get("/sites/:siteId/locales/:locale/resourceItems", sp(read, s.vocabulary.HandleGetResourceItems))
	authed.Post("/sites/:siteId/locales/:locale/resourceItems", sp(govern, s.vocabulary.HandleAddResourceItem))
	authed.Get("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(read, s.vocabulary.HandleGetResourceItem))
	authed.Put("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(govern, s.vocabulary.HandleSetResourceItem))
	authed.Delete("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(govern, s.vocabulary.HandleDeleteResourceItem))
	authed.Get("/sites/:siteId/apiKeys", sp(govern, s.admin.HandleGetAPIKeys))
	authed.Post("/sites/:siteId/apiKeys", sp(govern, s.admin.HandleAddAPIKey))
	authed.Delete("/sites/:siteId/apiKeys/:apiKey", sp(govern, s.admin.HandleDeleteAPIKey))
	authed.Post("/sites/:siteId/delegationTokens", sp(auth.PermAdmin, s.directory.HandleAddDelegationToken))

	authed.Get("/documents", q(read, s.documents.HandleGetDocuments))
	authed.Post("/documents", q(write, s.documents.HandleAddDocument))
	authed.Post("/documents/upload", q(write, s.documents.HandleAddDocumentUpload))
	authed.Post("/documents/compress", q(read, s.documents.HandleCompressDocuments))
	authed.Get("/documents/upload", q(write, s.documents.HandleGetDocumentUpload))
	authed.Patch("/documents/tags", q(write, s.documents.HandleUpdateMatchingDocumentTags))
	authed.Get("/documents/:documentId", q(read, s.documents.HandleGetDocument))
	authed.Patch("/documents/:documentId", q(write, s.documents.HandleUpdateDocument))
	authed.Delete("/documents/:documentId", q(del, s.documents.HandleDeleteDocument))
	authed.Put("/documents/:documentId/restore", q(write, s.documents.HandleRestoreDocument))
	authed.Delete("/documents/:documentId/purge", q(del, s.documents.HandlePurgeDocument))
	authed.Get("/documents/:documentId/upload", q(write, s.content.HandleGetDocumentIDUpload))
	authed.Get("/documents/:documentId/content", q(read, s.content.HandleGetDocumentContent))
	authed.Get("/documents/:documentId/url", q(read, s.content.HandleGetDocumentURL))
	authed.Get("/documents/:documentId/artifacts", q(read, s.documents.HandleGetDocumentArtifacts))
	authed.Get("/documents/:documentId/versions", q(read, s.documents.HandleGetDocumentVersions))
	authed.Put("/documents/:documentId/versions", q(write, s.documents.HandleSetDocumentVersion))
	authed.Delete("/documents/:documentId/versions/:versionKey", q(del, s.documents.HandleDeleteDocumentVersion))
	authed.Put("/documents/:documentId/artifacts/promoteArtifact", q(write, s.documents.HandlePromoteArtifact))
	authed.Get("/documents/:documentId/userActivities", q(read, s.flow.HandleGetDocumentActivities))
	authed.Get("/userActivities", q(read, s.flow.HandleGetUserActivities))
	authed.Get("/activities", q(read, s.flow.HandleGetActivities))
	authed.Get("/userNotifications", q(read, s.flow.HandleGetUserNotifications))
	authed.Post("/documents/:documentId/generate", q(write, s.signatures.HandleGenerateDocument))
	authed.Post("/documents/:documentId/certifications", q(write, s.signatures.HandleAddCertification))
	authed.Get("/sites/:siteId/secrets", sp(govern, s.signatures.HandleGetSecrets))
	authed.Post("/sites/:siteId/secrets", sp(govern, s.signatures.HandleAddSecret))
	authed.Delete("/sites/:siteId/secrets/:alias", sp(govern, s.signatures.HandleDeleteSecret))
	authed.Post("/esignature/:provider/:documentId/envelopes", q(write, s.signatures.HandleAddEnvelope))
	authed.Get("/esignature/:provider/:documentId/envelopes", q(read, s.signatures.HandleGetEnvelopes))
	authed.Get("/esignature/:provider/:documentId/envelopes/:envelopeId", q(read, s.signatures.HandleGetEnvelope))
	authed.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/send", q(write, s.signatures.HandleSendEnvelope))
	authed.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/views/recipient", q(write, s.signatures.HandleRecipientView))
	authed.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/views/sender", q(read, s.signatures.HandleSenderView))
	authed.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/reminders", q(write, s.signatures.HandleEnvelopeReminders))
	authed.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/void", q(write, s.signatures.HandleVoidEnvelope))
	authed.Post("/esignature/:provider/events", q(write, s.signatures.HandleEnvelopeEvents))
	authed.Put("/documents/:documentId/checkout", q(write, s.documents.HandleSetLock(storage.LockCheckout, false)))
	authed.Delete("/documents/:documentId/checkout", q(write, s.documents.HandleSetLock(storage.LockCheckout, true)))
	authed.Put("/documents/:documentId/legalHold", q(govern, s.documents.HandleSetLock(storage.LockLegalHold, false)))
	authed.Delete("/documents/:documentId/legalHold", q(govern, s.documents.HandleSetLock(storage.LockLegalHold, true)))

	authed.Get("/documents/:documentId/actions", q(read, s.flow.HandleGetDocumentActions))
	authed.Post("/documents/:documentId/actions", q(write, s.flow.HandleAddDocumentActions))
	authed.Get("/documents/:documentId/reviews", q(read, s.flow.HandleGetReviews))
	authed.Post("/documents/:documentId/reviews", q(write, s.flow.HandleAddReview))
	authed.Get("/documents/:documentId/reviews/:reviewId", q(read, s.flow.HandleGetReview))
	authed.Patch("/documents/:documentId/reviews/:reviewId", q(write, s.flow.HandleUpdateReview))
	authed.Get("/documents/:documentId/reviews/:reviewId/decisions", q(read, s.flow.HandleGetReviewDecisions))
	authed.Post("/documents/:documentId/reviews/:reviewId/decisions", q(write, s.flow.HandleAddReviewDecision))
	authed.Get("/reviews", q(read, s.flow.HandleGetOpenReviews))
	authed.Post("/documents/:documentId/actions/retry", q(write, s.flow.HandleRetryDocumentActions))
	authed.Get("/documents/:documentId/fulltext", q(read, s.flow.HandleGetDocumentFulltext))
	authed.Put("/documents/:documentId/fulltext", q(write, s.search.HandleSetDocumentFulltext))
	authed.Post("/documents/:documentId/fulltext", q(write, s.search.HandleSetDocumentFulltext))
	authed.Patch("/documents/:documentId/fulltext", q(write, s.search.HandleUpdateDocumentFulltext))
	authed.Delete("/documents/:documentId/fulltext", q(del, s.search.HandleDeleteDocumentFulltext))
	authed.Delete("/documents/:documentId/fulltext/tags/:tagKey", q(del, s.search.HandleDeleteDocumentFulltextTag))
	authed.Delete("/documents/:documentId/fulltext/tags/:tagKey/:tagValue", q(del, s.search.HandleDeleteDocumentFulltextTag))
	authed.Get("/documents/:documentId/ocr", q(read, s.flow.HandleGetDocumentOcr))
	authed.Get("/documents/:documentId/malwareScan", q(read, s.flow.HandleGetMalwareScan))
	authed.Put("/documents/:documentId/malwareScan", q(write, s.flow.AddActionFor("MALWARE_SCAN", "Malware scan request submitted")))
	authed.Put("/documents/:documentId/antivirus", q(write, s.flow.AddActionFor("ANTIVIRUS", "Antivirus request submitted")))
	authed.Post("/documents/:documentId/ocr", q(write, s.flow.AddActionFor("OCR", "OCR request submitted")))
	authed.Put("/documents/:documentId/ocr", q(write, s.documents.HandleSetDocumentOcr))
	authed.Delete("/documents/:documentId/ocr", q(del, s.documents.HandleDeleteDocumentOcr))
	authed.Get("/documents/:documentId/syncs", q(read, s.documents.HandleGetDocumentSyncs))
	authed.Post("/documents/:documentId/syncs", q(write, s.documents.HandleAddDocumentSync))
	authed.Post("/reindex/documents/:documentId", q(write, s.documents.HandleReindexDocument))
	authed.Get("/publications/:documentId", q(read, s.documents.HandleGetPublication))
	authed.Delete("/publications/:documentId", q(del, s.documents.HandleDeletePublication))
	authed.Get("/queues", q(read, s.flow.HandleGetQueues))
	authed.Post("/queues", q(govern, s.flow.HandleAddQueue))
	authed.Get("/queues/:queueId", q(read, s.flow.HandleGetQueue))
	authed.Delete("/queues/:queueId", q(govern, s.flow.HandleDeleteQueue))
	authed.Get("/queues/:queueId/documents", q(read, s.flow.HandleGetQueueDocuments))
	authed.Post("/queues/:queueId/documents/:documentId/decisions", q(write, s.flow.HandleQueueDecision))
	// Workflows and rulesets (workflows.go, rulesets.go): definitions are
	// site settings (GOVERN to write); documents enter with WRITE.
	authed.Get("/workflows", q(read, s.flow.HandleGetWorkflows))
	authed.Post("/workflows", q(govern, s.flow.HandleAddWorkflow))
	authed.Get("/workflows/:workflowId", q(read, s.flow.HandleGetWorkflow))
	authed.Put("/workflows/:workflowId", q(govern, s.flow.HandleSetWorkflow))
	authed.Patch("/workflows/:workflowId", q(govern, s.flow.HandleUpdateWorkflow))
	authed.Delete("/workflows/:workflowId", q(govern, s.flow.HandleDeleteWorkflow))
	authed.Get("/workflows/:workflowId/documents", q(read, s.flow.HandleGetWorkflowDocuments))
	authed.Get("/documents/:documentId/workflows", q(read, s.flow.HandleGetDocumentWorkflows))
	authed.Post("/documents/:documentId/workflows", q(write, s.flow.HandleAddDocumentWorkflow))
	authed.Get("/documents/:documentId/workflows/:workflowId", q(read, s.flow.HandleGetDocumentWorkflow))
	authed.Post("/documents/:documentId/workflow/:workflowId/decisions", q(write, s.flow.HandleWorkflowDecision))
	authed.Get("/rulesets", q(read, s.flow.HandleGetRulesets))
	authed.Post("/rulesets", q(govern, s.flow.HandleAddRuleset))
	authed.Get("/rulesets/:rulesetId", q(read, s.flow.HandleGetRuleset))
	authed.Patch("/rulesets/:rulesetId", q(govern, s.flow.HandleUpdateRuleset))
	authed.Delete("/rulesets/:rulesetId", q(govern, s.flow.HandleDeleteRuleset))
	authed.Get("/rulesets/:rulesetId/rules", q(read, s.flow.HandleGetRules))
	authed.Post("/rulesets/:rulesetId/rules", q(govern, s.flow.HandleAddRule))
	authed.Get("/rulesets/:rulesetId/rules/:ruleId", q(read, s.flow.HandleGetRule))
	authed.Patch("/rulesets/:rulesetId/rules/:ruleId", q(govern, s.flow.HandleUpdateRule))
	authed.Delete("/rulesets/:rulesetId/rules/:ruleId", q(govern, s.flow.HandleDeleteRule))
	authed.Get("/sites/:siteId/configuration", sp(govern, s.admin.HandleGetSiteConfig))
	authed.Patch("/sites/:siteId/configuration", sp(govern, s.admin.HandleUpdateSiteConfig))
	authed.Post("/sites/:siteId/configuration/notification/test", sp(govern, s.admin.HandleNotificationTest))
	authed.Get("/documents/:documentId/notifications", q(read, s.flow.HandleGetDocumentNotifications))
	authed.Get("/documents/:documentId/ai/prompts", q(read, s.flow.ResultList("aiPrompt", "aiPromptResults", false)))
	authed.Get("/documents/:documentId/ai/prompts/:llmPromptEntityName", q(read, s.flow.ResultList("aiPrompt", "aiPromptResults", true)))
	authed.Get("/documents/:documentId/dataClassification", q(read, s.flow.ResultList("dataClassification", "dataClassifications", false)))
	authed.Get("/documents/:documentId/metadataExtractionResults", q(read, s.flow.ResultList("metadataExtraction", "metadataExtractions", false)))
	authed.Get("/documents/:documentId/metadataExtractionResults/:llmPromptEntityName", q(read, s.flow.ResultList("metadataExtraction", "metadataExtractions", true)))

	authed.Get("/documents/:documentId/tags", q(read, s.documents.HandleGetDocumentTags))
	authed.Post("/documents/:documentId/tags", q(write, s.documents.HandleAddDocumentTags))
	authed.Put("/documents/:documentId/tags", q(write, s.documents.HandleSetDocumentTags))
	authed.Patch("/documents/:documentId/tags", q(write, s.documents.HandleUpdateDocumentTags))
	authed.Get("/documents/:documentId/tags/:tagKey", q(read, s.documents.HandleGetDocumentTag))
	authed.Put("/documents/:documentId/tags/:tagKey", q(write, s.documents.HandleSetDocumentTag))
	authed.Delete("/documents/:documentId/tags/:tagKey", q(del, s.documents.HandleDeleteDocumentTag))
	authed.Delete("/documents/:documentId/tags/:tagKey/:tagValue", q(del, s.documents.HandleDeleteDocumentTagAndValue))

	authed.Get("/attributes", q(read, s.documents.HandleGetAttributes))
	authed.Post("/attributes", q(write, s.documents.HandleAddAttribute))
	authed.Get("/attributes/:key", q(read, s.documents.HandleGetAttribute))
	authed.Patch("/attributes/:key", q(write, s.documents.HandleUpdateAttribute))
	authed.Delete("/attributes/:key", q(del, s.documents.HandleDeleteAttribute))
	authed.Get("/attributes/:key/allowedValues", q(read, s.documents.HandleGetAttributeAllowedValues))

	authed.Get("/documents/:documentId/attributes", q(read, s.documents.HandleGetDocumentAttributes))
	authed.Post("/documents/:documentId/attributes", q(write, s.documents.HandleAddDocumentAttributes))
	authed.Put("/documents/:documentId/attributes", q(write, s.documents.HandleSetDocumentAttributes))
	authed.Get("/documents/:documentId/attributes/:attributeKey", q(read, s.documents.HandleGetDocumentAttribute))
	authed.Put("/documents/:documentId/attributes/:attributeKey", q(write, s.documents.HandleSetDocumentAttributeValue))
	authed.Delete("/documents/:documentId/attributes/:attributeKey", q(del, s.documents.HandleDeleteDocumentAttribute))
	authed.Delete("/documents/:documentId/attributes/:attributeKey/:attributeValue", q(del, s.documents.HandleDeleteDocumentAttribute))

	authed.Get("/sites/:siteId/schema/document", sp(read, s.vocabulary.HandleGetSitesSchema))
	authed.Put("/sites/:siteId/schema/document", sp(govern, s.vocabulary.HandleSetSitesSchema))
	authed.Get("/sites/:siteId/schema/document/attributes/:key/allowedValues", sp(read, s.vocabulary.HandleGetSitesSchemaAllowedValues))
	authed.Get("/sites/:siteId/classifications", sp(read, s.vocabulary.HandleGetClassifications))
	authed.Post("/sites/:siteId/classifications", sp(govern, s.vocabulary.HandleAddClassification))
	authed.Get("/sites/:siteId/classifications/:classificationId", sp(read, s.vocabulary.HandleGetClassification))
	authed.Put("/sites/:siteId/classifications/:classificationId", sp(govern, s.vocabulary.HandleSetClassification))
	authed.Delete("/sites/:siteId/classifications/:classificationId", sp(govern, s.vocabulary.HandleDeleteClassification))
	authed.Get("/sites/:siteId/classifications/:classificationId/attributes/:key/allowedValues", sp(read, s.vocabulary.HandleGetClassificationAllowedValues))

	authed.Get("/entityTypes", q(read, s.vocabulary.HandleGetEntityTypes))
	authed.Post("/entityTypes", q(write, s.vocabulary.HandleAddEntityType))
	authed.Get("/entityTypes/:entityTypeId", q(read, s.vocabulary.HandleGetEntityType))
	authed.Put("/entityTypes/:entityTypeId", q(write, s.vocabulary.HandleSetEntityType))
	authed.Delete("/entityTypes/:entityTypeId", q(del, s.vocabulary.HandleDeleteEntityType))
	authed.Get("/entities/:entityTypeId", q(read, s.vocabulary.HandleGetEntities))
	authed.Post("/entities/:entityTypeId", q(write, s.vocabulary.HandleAddEntity))
	authed.Get("/entities/:entityTypeId/:entityId", q(read, s.vocabulary.HandleGetEntity))
	authed.Put("/entities/:entityTypeId/:entityId", q(write, s.vocabulary.HandleSetEntity))
	authed.Patch("/entities/:entityTypeId/:entityId", q(write, s.vocabulary.HandleUpdateEntity))
	authed.Delete("/entities/:entityTypeId/:entityId", q(del, s.vocabulary.HandleDeleteEntity))
	authed.Delete("/entities/:entityTypeId/:entityId/attributes/:attributeKey", q(del, s.vocabulary.HandleDeleteEntity))

	authed.Post("/search", q(read, s.search.HandleSearch))
	authed.Post("/searchFulltext", q(read, s.search.HandleSearchFulltext))
	authed.Post("/queryFulltext", q(read, s.search.HandleQueryFulltext))
	authed.Get("/folders", q(read, s.search.HandleGetFolders))
	authed.Post("/folders", q(write, s.search.HandleAddFolder))
	authed.Delete("/folders/:indexKey", q(del, s.search.HandleDeleteFolder))
	authed.Post("/indices/search", q(read, s.search.HandleIndexSearch))
	authed.Delete("/indices/:indexType/:indexKey", q(del, s.search.HandleDeleteFolder))
	authed.Post("/indices/:indexType/move", q(write, s.search.HandleIndexFolderMove))
	authed.Post("/folders/:indexKey/moves", q(write, s.search.HandleMoveFolder))
	authed.Get("/folders/:indexKey/permissions", q(read, s.search.HandleGetFolderPermissions))
	authed.Get("/shares", none(s.search.HandleGetShares))
	authed.Post("/shares/folders/:indexKey", q(govern, s.search.HandleAddFolderShare))
	authed.Delete("/shares/:shareKey", none(s.search.HandleDeleteShare))
	authed.Put("/folders/permissions", q(govern, s.search.HandleSetFolderPermissions))

	authed.Get("/mappings", q(read, s.vocabulary.HandleGetMappings))
	authed.Post("/mappings", q(govern, s.vocabulary.HandleAddMapping))
	authed.Get("/mappings/:mappingId", q(read, s.vocabulary.HandleGetMapping))
	authed.Put("/mappings/:mappingId", q(govern, s.vocabulary.HandleSetMapping))
	authed.Delete("/mappings/:mappingId", q(govern, s.vocabulary.HandleDeleteMapping))

	// Webhooks: managed by site governors (SERVICE-SPEC.md §5.2).
	authed.Get("/webhooks", q(govern, s.intake.HandleGetWebhooks))
	authed.Post("/webhooks", q(govern, s.intake.HandleAddWebhook))
	authed.Get("/webhooks/:webhookId", q(govern, s.intake.HandleGetWebhook))
	authed.Patch("/webhooks/:webhookId", q(govern, s.intake.HandleUpdateWebhook))
	authed.Delete("/webhooks/:webhookId", q(govern, s.intake.HandleDeleteWebhook))
	authed.Get("/webhooks/:webhookId/tags", q(govern, s.intake.HandleGetWebhookTags))
	authed.Post("/webhooks/:webhookId/tags", q(govern, s.intake.HandleAddWebhookTag))
	authed.Post("/private/webhooks/*", q(write, s.intake.HandlePrivateWebhook))
	authed.Get("/objects/examine/pdf", q(write, s.content.HandleGetExaminePdfURL))
	authed.Get("/objects/examine/:id/pdf", q(read, s.content.HandleGetExaminePdf))
	authed.Post("/shortlinks", q(write, s.admin.HandleAddShortlink))
	authed.Delete("/shortlinks/:slug", q(write, s.admin.HandleDeleteShortlink))

	// Numbering sequences (Quire's own API, see API.md).
	authed.Get("/sites/:siteId/sequences", sp(read, s.vocabulary.HandleGetSequences))
	authed.Post("/sites/:siteId/sequences", sp(govern, s.vocabulary.HandleAddSequence))
	authed.Get("/sites/:siteId/sequences/:sequenceId", sp(read, s.vocabulary.HandleGetSequence))
	authed.Delete("/sites/:siteId/sequences/:sequenceId", sp(govern, s.vocabulary.HandleDeleteSequence))
	authed.Post("/sites/:siteId/sequences/:sequenceId/next", sp(write, s.vocabulary.HandleNextSequenceValue))

	// FormKiQ routes Quire refuses on purpose: 501 with the reason
	// (refused.go).
	for _, r := range refusedRoutes {
		authed.Add(r.method, r.path, none(notServed(r.reason)))
	}
	// Scanner intake (Quire's own API, see API.md "Scanner intake").
	authed.Get("/sites/:siteId/intakeProfiles", sp(govern, s.intake.HandleGetIntakeProfiles))
	authed.Post("/sites/:siteId/intakeProfiles", sp(govern, s.intake.HandleAddIntakeProfile))
	authed.Get("/sites/:siteId/intakeProfiles/:name", sp(govern, s.intake.HandleGetIntakeProfile))
	authed.Put("/sites/:siteId/intakeProfiles/:name", sp(govern, s.intake.HandleSetIntakeProfile))
	authed.Delete("/sites/:siteId/intakeProfiles/:name", sp(govern, s.intake.HandleDeleteIntakeProfile))
	authed.Get("/sites/:siteId/intakeProfiles/:name/errors", sp(govern, s.intake.HandleGetIntakeErrors))
	authed.Post("/sites/:siteId/intake/:name", sp(write, s.intake.HandlePostIntake))

	// Anything else is FormKiQ's "request handler not found".
	if testRoutes != nil {
		testRoutes(a)
	}
	a.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
}
