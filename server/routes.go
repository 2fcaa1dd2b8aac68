package server

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/ratelimit"
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
var errNotAdmin = errStatus(http.StatusUnauthorized, "fkq access denied (Admins group required)")

// requireAdmin refuses h to callers outside the Admins group.
func requireAdmin(h handler) handler {
	return func(r *reqCtx) error {
		if !r.p.Admin {
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
	a.Use(s.accessLog, s.recoverPanic, s.safeHeaders, s.cors, s.refuseWhenDiverged, s.idempotencyKey, s.sessionIndex)

	// No token: each route has a rate-limit class (ratelimits.go;
	// TestRateLimits_EveryPublicRoute finds a route left without one).
	// Health, and signed upload and download URLs (the signature is the
	// credential).
	pub := s.publicRoute
	pub("GET", "/healthz", ratelimit.Probe, s.handleHealthz)
	pub("GET", "/readyz", ratelimit.Probe, s.handleReadyz)
	pub("GET", "/metrics", ratelimit.Probe, s.metricsHandler())
	pub("PUT", "/uploads/:siteId/:documentId", ratelimit.Links, s.handlePutUpload)
	pub("PUT", "/uploads/examine/:siteId/:id", ratelimit.Links, s.handlePutExamine)
	pub("GET", "/archives/:siteId/:archiveId", ratelimit.Links, s.handleGetArchive)
	pub("GET", "/downloads/:siteId/:documentId", ratelimit.Links, s.handleGetDownload)
	pub("GET", "/published/:siteId/:documentId", ratelimit.Links, s.handleGetPublished)
	// The web console's files (console.go): GET / (and /console) lead
	// to /console/.
	pub("GET", "/", ratelimit.Console, s.handleConsoleRoot)
	pub("GET", "/console/*", ratelimit.Console, s.handleConsole)
	// Sign-in (FormKiQ's auth API) against the built-in directory.
	pub("POST", "/login", ratelimit.SignIn, s.handleLogin)
	pub("POST", "/login/refresh", ratelimit.Refresh, s.handleRefresh)
	pub("POST", "/login/logout", ratelimit.Refresh, s.handleLogout)
	// Sign-in through the identity provider, for the console (oidc.go).
	pub("GET", "/login/oidc/info", ratelimit.Refresh, s.handleOIDCInfo)
	pub("GET", "/login/oidc", ratelimit.Refresh, s.handleOIDCStart)
	pub("GET", "/login/oidc/callback", ratelimit.Refresh, s.handleOIDCCallback)
	pub("POST", "/respondToAuthChallenge", ratelimit.SignIn, s.handleRespondToAuthChallenge)
	pub("POST", "/changePassword", ratelimit.SignIn, s.handleChangePassword)
	pub("POST", "/forgotPassword", ratelimit.Reset, s.handleForgotPassword)
	pub("POST", "/forgotPasswordConfirm", ratelimit.SignIn, s.handleForgotPasswordConfirm)
	pub("POST", "/confirmRegistration", ratelimit.SignIn, s.handleConfirmRegistration)
	// E-signature: the signing token is the credential (esign.go).
	pub("GET", "/esign/:token", ratelimit.Signing, s.handleSigningPage)
	pub("POST", "/esign/:token", ratelimit.Signing, s.handleSigningSubmit)
	pub("GET", "/esign/:token/document", ratelimit.Signing, s.handleSigningDocument)
	pub("GET", "/esign-status/:envelopeId", ratelimit.Signing, s.handleEnvelopeStatusPage)
	// Short links: the slug is the credential, as for signed URLs.
	pub("GET", "/s/:slug", ratelimit.Links, s.handleResolveShortlink)
	// Anonymous documents, where the site's configuration enables them.
	pub("POST", "/public/documents", ratelimit.Public, s.handlePublicAddDocument)
	// Public webhook intake: no token, only with webhooks.public set.
	pub("POST", "/public/webhooks/*", ratelimit.Public, s.handlePublicWebhook)
	// The join token in the body is the credential (cluster.go).
	pub("POST", "/cluster/join", ratelimit.Cluster, s.handleClusterJoin)
	// WebDAV: Basic auth on every request, checked by the handler (dav.go).
	for _, m := range davMethods {
		pub(m, "/dav", ratelimit.Dav, s.handleDav)
		pub(m, "/dav/*", ratelimit.Dav, s.handleDav)
	}

	api := a.Group("", s.authenticate)
	q := func(p auth.Permission, h handler) fiber.Handler { return s.wrap(siteQuery, p, h) }
	sp := func(p auth.Permission, h handler) fiber.Handler { return s.wrap(sitePath, p, h) }
	none := func(h handler) fiber.Handler { return s.wrap(siteNone, noPerm, h) }
	// admin routes are the Admins group's only; anyone else gets
	// FormKiQ's 401, as for too few permissions on a site.
	admin := func(h handler) fiber.Handler { return s.wrap(siteNone, noPerm, requireAdmin(h)) }

	api.Get("/version", none(s.handleGetVersion))
	api.Get("/sites", none(s.handleGetSites))
	api.Get("/system/backup", admin(s.handleGetBackup))
	api.Get("/cluster/status", admin(s.handleGetClusterStatus))
	api.Get("/system/health", admin(s.handleGetSystemHealth))
	api.Delete("/cluster/nodes/:nodeId", admin(s.handleDeleteClusterNode))
	api.Post("/cluster/nodes/:nodeId/rejoin", admin(s.handleRejoinClusterNode))
	api.Post("/cluster/verify", admin(s.handleVerifyCluster))
	api.Post("/system/keys/rotate", admin(s.handleRotateKeys))
	api.Post("/system/secrets/rotate", admin(s.handleRotateSecretsKey))
	api.Get("/system/configuration", none(s.handleGetSystemConfig))
	api.Patch("/system/configuration", admin(s.handleUpdateSystemConfig))
	api.Get("/users", admin(s.handleGetUsers))
	api.Post("/users", admin(s.handleAddUser))
	api.Get("/users/:username", admin(s.handleGetUser))
	api.Delete("/users/:username", admin(s.handleDeleteUser))
	api.Get("/users/:username/groups", admin(s.handleGetUserGroups))
	api.Put("/users/:username/:userOperation", admin(s.handleUserOperation))
	api.Get("/groups", admin(s.handleGetGroups))
	api.Post("/groups", admin(s.handleAddGroup))
	api.Get("/groups/:groupName", admin(s.handleGetGroup))
	api.Delete("/groups/:groupName", admin(s.handleDeleteGroup))
	api.Get("/groups/:groupName/users", admin(s.handleGetGroupUsers))
	api.Post("/groups/:groupName/users", admin(s.handleAddGroupUser))
	api.Delete("/groups/:groupName/users/:username", admin(s.handleRemoveGroupUser))
	api.Get("/system/inferenceModels", none(s.handleGetInferenceModels))
	api.Post("/system/inferenceModels/agreement", admin(s.handleAgreeInferenceModel))
	api.Post("/sites", admin(s.handleAddSite))
	api.Patch("/sites/:siteId", admin(s.handleUpdateSite))
	api.Get("/sites/:siteId/groups", sp(govern, s.handleGetSiteGroups))
	api.Get("/sites/:siteId/groups/:groupName", sp(govern, s.handleGetSiteGroup))
	api.Delete("/sites/:siteId/groups/:groupName", sp(govern, requireAdmin(s.handleDeleteSiteGroup)))
	api.Put("/sites/:siteId/groups/:groupName/permissions", sp(govern, requireAdmin(s.handleSetSiteGroupPermissions)))
	api.Get("/sites/:siteId/eventSubscriptions", sp(govern, s.handleGetEventSubs))
	api.Post("/sites/:siteId/eventSubscriptions", sp(govern, s.handleAddEventSub))
	api.Get("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.handleGetEventSub))
	api.Patch("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.handleUpdateEventSub))
	api.Delete("/sites/:siteId/eventSubscriptions/:eventSubscriptionId", sp(govern, s.handleDeleteEventSub))
	api.Get("/sites/:siteId/locales", sp(read, s.handleGetLocales))
	api.Post("/sites/:siteId/locales", sp(govern, s.handleAddLocale))
	api.Delete("/sites/:siteId/locales/:locale", sp(govern, s.handleDeleteLocale))
	api.Get("/sites/:siteId/locales/:locale/resourceItems", sp(read, s.handleGetResourceItems))
	api.Post("/sites/:siteId/locales/:locale/resourceItems", sp(govern, s.handleAddResourceItem))
	api.Get("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(read, s.handleGetResourceItem))
	api.Put("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(govern, s.handleSetResourceItem))
	api.Delete("/sites/:siteId/locales/:locale/resourceItems/:itemKey", sp(govern, s.handleDeleteResourceItem))
	api.Get("/sites/:siteId/apiKeys", sp(govern, s.handleGetAPIKeys))
	api.Post("/sites/:siteId/apiKeys", sp(govern, s.handleAddAPIKey))
	api.Delete("/sites/:siteId/apiKeys/:apiKey", sp(govern, s.handleDeleteAPIKey))
	api.Post("/sites/:siteId/delegationTokens", sp(auth.PermAdmin, s.handleAddDelegationToken))

	api.Get("/documents", q(read, s.handleGetDocuments))
	api.Post("/documents", q(write, s.handleAddDocument))
	api.Post("/documents/upload", q(write, s.handleAddDocumentUpload))
	api.Post("/documents/compress", q(read, s.handleCompressDocuments))
	api.Get("/documents/upload", q(write, s.handleGetDocumentUpload))
	api.Patch("/documents/tags", q(write, s.handleUpdateMatchingDocumentTags))
	api.Get("/documents/:documentId", q(read, s.handleGetDocument))
	api.Patch("/documents/:documentId", q(write, s.handleUpdateDocument))
	api.Delete("/documents/:documentId", q(del, s.handleDeleteDocument))
	api.Put("/documents/:documentId/restore", q(write, s.handleRestoreDocument))
	api.Delete("/documents/:documentId/purge", q(del, s.handlePurgeDocument))
	api.Get("/documents/:documentId/upload", q(write, s.handleGetDocumentIDUpload))
	api.Get("/documents/:documentId/content", q(read, s.handleGetDocumentContent))
	api.Get("/documents/:documentId/url", q(read, s.handleGetDocumentURL))
	api.Get("/documents/:documentId/artifacts", q(read, s.handleGetDocumentArtifacts))
	api.Get("/documents/:documentId/versions", q(read, s.handleGetDocumentVersions))
	api.Put("/documents/:documentId/versions", q(write, s.handleSetDocumentVersion))
	api.Delete("/documents/:documentId/versions/:versionKey", q(del, s.handleDeleteDocumentVersion))
	api.Put("/documents/:documentId/artifacts/promoteArtifact", q(write, s.handlePromoteArtifact))
	api.Get("/documents/:documentId/userActivities", q(read, s.handleGetDocumentActivities))
	api.Get("/userActivities", q(read, s.handleGetUserActivities))
	api.Get("/activities", q(read, s.handleGetActivities))
	api.Get("/userNotifications", q(read, s.handleGetUserNotifications))
	api.Post("/documents/:documentId/generate", q(write, s.handleGenerateDocument))
	api.Post("/documents/:documentId/certifications", q(write, s.handleAddCertification))
	api.Get("/sites/:siteId/secrets", sp(govern, s.handleGetSecrets))
	api.Post("/sites/:siteId/secrets", sp(govern, s.handleAddSecret))
	api.Delete("/sites/:siteId/secrets/:alias", sp(govern, s.handleDeleteSecret))
	api.Post("/esignature/:provider/:documentId/envelopes", q(write, s.handleAddEnvelope))
	api.Get("/esignature/:provider/:documentId/envelopes", q(read, s.handleGetEnvelopes))
	api.Get("/esignature/:provider/:documentId/envelopes/:envelopeId", q(read, s.handleGetEnvelope))
	api.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/send", q(write, s.handleSendEnvelope))
	api.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/views/recipient", q(write, s.handleRecipientView))
	api.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/views/sender", q(read, s.handleSenderView))
	api.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/reminders", q(write, s.handleEnvelopeReminders))
	api.Post("/esignature/:provider/:documentId/envelopes/:envelopeId/void", q(write, s.handleVoidEnvelope))
	api.Post("/esignature/:provider/events", q(write, s.handleEnvelopeEvents))
	api.Put("/documents/:documentId/checkout", q(write, s.handleSetLock(storage.LockCheckout, false)))
	api.Delete("/documents/:documentId/checkout", q(write, s.handleSetLock(storage.LockCheckout, true)))
	api.Put("/documents/:documentId/legalHold", q(govern, s.handleSetLock(storage.LockLegalHold, false)))
	api.Delete("/documents/:documentId/legalHold", q(govern, s.handleSetLock(storage.LockLegalHold, true)))

	api.Get("/documents/:documentId/actions", q(read, s.handleGetDocumentActions))
	api.Post("/documents/:documentId/actions", q(write, s.handleAddDocumentActions))
	api.Get("/documents/:documentId/reviews", q(read, s.handleGetReviews))
	api.Post("/documents/:documentId/reviews", q(write, s.handleAddReview))
	api.Get("/documents/:documentId/reviews/:reviewId", q(read, s.handleGetReview))
	api.Patch("/documents/:documentId/reviews/:reviewId", q(write, s.handleUpdateReview))
	api.Get("/documents/:documentId/reviews/:reviewId/decisions", q(read, s.handleGetReviewDecisions))
	api.Post("/documents/:documentId/reviews/:reviewId/decisions", q(write, s.handleAddReviewDecision))
	api.Get("/reviews", q(read, s.handleGetOpenReviews))
	api.Post("/documents/:documentId/actions/retry", q(write, s.handleRetryDocumentActions))
	api.Get("/documents/:documentId/fulltext", q(read, s.handleGetDocumentFulltext))
	api.Put("/documents/:documentId/fulltext", q(write, s.handleSetDocumentFulltext))
	api.Post("/documents/:documentId/fulltext", q(write, s.handleSetDocumentFulltext))
	api.Patch("/documents/:documentId/fulltext", q(write, s.handleUpdateDocumentFulltext))
	api.Delete("/documents/:documentId/fulltext", q(del, s.handleDeleteDocumentFulltext))
	api.Delete("/documents/:documentId/fulltext/tags/:tagKey", q(del, s.handleDeleteDocumentFulltextTag))
	api.Delete("/documents/:documentId/fulltext/tags/:tagKey/:tagValue", q(del, s.handleDeleteDocumentFulltextTag))
	api.Get("/documents/:documentId/ocr", q(read, s.handleGetDocumentOcr))
	api.Get("/documents/:documentId/malwareScan", q(read, s.handleGetMalwareScan))
	api.Put("/documents/:documentId/malwareScan", q(write, s.addActionFor("MALWARE_SCAN", "Malware scan request submitted")))
	api.Put("/documents/:documentId/antivirus", q(write, s.addActionFor("ANTIVIRUS", "Antivirus request submitted")))
	api.Post("/documents/:documentId/ocr", q(write, s.addActionFor("OCR", "OCR request submitted")))
	api.Put("/documents/:documentId/ocr", q(write, s.handleSetDocumentOcr))
	api.Delete("/documents/:documentId/ocr", q(del, s.handleDeleteDocumentOcr))
	api.Get("/documents/:documentId/syncs", q(read, s.handleGetDocumentSyncs))
	api.Post("/documents/:documentId/syncs", q(write, s.handleAddDocumentSync))
	api.Post("/reindex/documents/:documentId", q(write, s.handleReindexDocument))
	api.Get("/publications/:documentId", q(read, s.handleGetPublication))
	api.Delete("/publications/:documentId", q(del, s.handleDeletePublication))
	api.Get("/queues", q(read, s.handleGetQueues))
	api.Post("/queues", q(govern, s.handleAddQueue))
	api.Get("/queues/:queueId", q(read, s.handleGetQueue))
	api.Delete("/queues/:queueId", q(govern, s.handleDeleteQueue))
	api.Get("/queues/:queueId/documents", q(read, s.handleGetQueueDocuments))
	api.Post("/queues/:queueId/documents/:documentId/decisions", q(write, s.handleQueueDecision))
	// Workflows and rulesets (workflows.go, rulesets.go): definitions are
	// site settings (GOVERN to write); documents enter with WRITE.
	api.Get("/workflows", q(read, s.handleGetWorkflows))
	api.Post("/workflows", q(govern, s.handleAddWorkflow))
	api.Get("/workflows/:workflowId", q(read, s.handleGetWorkflow))
	api.Put("/workflows/:workflowId", q(govern, s.handleSetWorkflow))
	api.Patch("/workflows/:workflowId", q(govern, s.handleUpdateWorkflow))
	api.Delete("/workflows/:workflowId", q(govern, s.handleDeleteWorkflow))
	api.Get("/workflows/:workflowId/documents", q(read, s.handleGetWorkflowDocuments))
	api.Get("/documents/:documentId/workflows", q(read, s.handleGetDocumentWorkflows))
	api.Post("/documents/:documentId/workflows", q(write, s.handleAddDocumentWorkflow))
	api.Get("/documents/:documentId/workflows/:workflowId", q(read, s.handleGetDocumentWorkflow))
	api.Post("/documents/:documentId/workflow/:workflowId/decisions", q(write, s.handleWorkflowDecision))
	api.Get("/rulesets", q(read, s.handleGetRulesets))
	api.Post("/rulesets", q(govern, s.handleAddRuleset))
	api.Get("/rulesets/:rulesetId", q(read, s.handleGetRuleset))
	api.Patch("/rulesets/:rulesetId", q(govern, s.handleUpdateRuleset))
	api.Delete("/rulesets/:rulesetId", q(govern, s.handleDeleteRuleset))
	api.Get("/rulesets/:rulesetId/rules", q(read, s.handleGetRules))
	api.Post("/rulesets/:rulesetId/rules", q(govern, s.handleAddRule))
	api.Get("/rulesets/:rulesetId/rules/:ruleId", q(read, s.handleGetRule))
	api.Patch("/rulesets/:rulesetId/rules/:ruleId", q(govern, s.handleUpdateRule))
	api.Delete("/rulesets/:rulesetId/rules/:ruleId", q(govern, s.handleDeleteRule))
	api.Get("/sites/:siteId/configuration", sp(govern, s.handleGetSiteConfig))
	api.Patch("/sites/:siteId/configuration", sp(govern, s.handleUpdateSiteConfig))
	api.Post("/sites/:siteId/configuration/notification/test", sp(govern, s.handleNotificationTest))
	api.Get("/documents/:documentId/notifications", q(read, s.handleGetDocumentNotifications))
	api.Get("/documents/:documentId/ai/prompts", q(read, s.resultList("aiPrompt", "aiPromptResults", false)))
	api.Get("/documents/:documentId/ai/prompts/:llmPromptEntityName", q(read, s.resultList("aiPrompt", "aiPromptResults", true)))
	api.Get("/documents/:documentId/dataClassification", q(read, s.resultList("dataClassification", "dataClassifications", false)))
	api.Get("/documents/:documentId/metadataExtractionResults", q(read, s.resultList("metadataExtraction", "metadataExtractions", false)))
	api.Get("/documents/:documentId/metadataExtractionResults/:llmPromptEntityName", q(read, s.resultList("metadataExtraction", "metadataExtractions", true)))

	api.Get("/documents/:documentId/tags", q(read, s.handleGetDocumentTags))
	api.Post("/documents/:documentId/tags", q(write, s.handleAddDocumentTags))
	api.Put("/documents/:documentId/tags", q(write, s.handleSetDocumentTags))
	api.Patch("/documents/:documentId/tags", q(write, s.handleUpdateDocumentTags))
	api.Get("/documents/:documentId/tags/:tagKey", q(read, s.handleGetDocumentTag))
	api.Put("/documents/:documentId/tags/:tagKey", q(write, s.handleSetDocumentTag))
	api.Delete("/documents/:documentId/tags/:tagKey", q(del, s.handleDeleteDocumentTag))
	api.Delete("/documents/:documentId/tags/:tagKey/:tagValue", q(del, s.handleDeleteDocumentTagAndValue))

	api.Get("/attributes", q(read, s.handleGetAttributes))
	api.Post("/attributes", q(write, s.handleAddAttribute))
	api.Get("/attributes/:key", q(read, s.handleGetAttribute))
	api.Patch("/attributes/:key", q(write, s.handleUpdateAttribute))
	api.Delete("/attributes/:key", q(del, s.handleDeleteAttribute))
	api.Get("/attributes/:key/allowedValues", q(read, s.handleGetAttributeAllowedValues))

	api.Get("/documents/:documentId/attributes", q(read, s.handleGetDocumentAttributes))
	api.Post("/documents/:documentId/attributes", q(write, s.handleAddDocumentAttributes))
	api.Put("/documents/:documentId/attributes", q(write, s.handleSetDocumentAttributes))
	api.Get("/documents/:documentId/attributes/:attributeKey", q(read, s.handleGetDocumentAttribute))
	api.Put("/documents/:documentId/attributes/:attributeKey", q(write, s.handleSetDocumentAttributeValue))
	api.Delete("/documents/:documentId/attributes/:attributeKey", q(del, s.handleDeleteDocumentAttribute))
	api.Delete("/documents/:documentId/attributes/:attributeKey/:attributeValue", q(del, s.handleDeleteDocumentAttribute))

	api.Get("/sites/:siteId/schema/document", sp(read, s.handleGetSitesSchema))
	api.Put("/sites/:siteId/schema/document", sp(govern, s.handleSetSitesSchema))
	api.Get("/sites/:siteId/schema/document/attributes/:key/allowedValues", sp(read, s.handleGetSitesSchemaAllowedValues))
	api.Get("/sites/:siteId/classifications", sp(read, s.handleGetClassifications))
	api.Post("/sites/:siteId/classifications", sp(govern, s.handleAddClassification))
	api.Get("/sites/:siteId/classifications/:classificationId", sp(read, s.handleGetClassification))
	api.Put("/sites/:siteId/classifications/:classificationId", sp(govern, s.handleSetClassification))
	api.Delete("/sites/:siteId/classifications/:classificationId", sp(govern, s.handleDeleteClassification))
	api.Get("/sites/:siteId/classifications/:classificationId/attributes/:key/allowedValues", sp(read, s.handleGetClassificationAllowedValues))

	api.Get("/entityTypes", q(read, s.handleGetEntityTypes))
	api.Post("/entityTypes", q(write, s.handleAddEntityType))
	api.Get("/entityTypes/:entityTypeId", q(read, s.handleGetEntityType))
	api.Put("/entityTypes/:entityTypeId", q(write, s.handleSetEntityType))
	api.Delete("/entityTypes/:entityTypeId", q(del, s.handleDeleteEntityType))
	api.Get("/entities/:entityTypeId", q(read, s.handleGetEntities))
	api.Post("/entities/:entityTypeId", q(write, s.handleAddEntity))
	api.Get("/entities/:entityTypeId/:entityId", q(read, s.handleGetEntity))
	api.Put("/entities/:entityTypeId/:entityId", q(write, s.handleSetEntity))
	api.Patch("/entities/:entityTypeId/:entityId", q(write, s.handleUpdateEntity))
	api.Delete("/entities/:entityTypeId/:entityId", q(del, s.handleDeleteEntity))
	api.Delete("/entities/:entityTypeId/:entityId/attributes/:attributeKey", q(del, s.handleDeleteEntity))

	api.Post("/search", q(read, s.handleSearch))
	api.Post("/searchFulltext", q(read, s.handleSearchFulltext))
	api.Post("/queryFulltext", q(read, s.handleQueryFulltext))
	api.Get("/folders", q(read, s.handleGetFolders))
	api.Post("/folders", q(write, s.handleAddFolder))
	api.Delete("/folders/:indexKey", q(del, s.handleDeleteFolder))
	api.Post("/indices/search", q(read, s.handleIndexSearch))
	api.Delete("/indices/:indexType/:indexKey", q(del, s.handleDeleteFolder))
	api.Post("/indices/:indexType/move", q(write, s.handleIndexFolderMove))
	api.Post("/folders/:indexKey/moves", q(write, s.handleMoveFolder))
	api.Get("/folders/:indexKey/permissions", q(read, s.handleGetFolderPermissions))
	api.Get("/shares", none(s.handleGetShares))
	api.Post("/shares/folders/:indexKey", q(govern, s.handleAddFolderShare))
	api.Delete("/shares/:shareKey", none(s.handleDeleteShare))
	api.Put("/folders/permissions", q(govern, s.handleSetFolderPermissions))

	api.Get("/mappings", q(read, s.handleGetMappings))
	api.Post("/mappings", q(govern, s.handleAddMapping))
	api.Get("/mappings/:mappingId", q(read, s.handleGetMapping))
	api.Put("/mappings/:mappingId", q(govern, s.handleSetMapping))
	api.Delete("/mappings/:mappingId", q(govern, s.handleDeleteMapping))

	// Webhooks: managed by site governors (SERVICE-SPEC.md §5.2).
	api.Get("/webhooks", q(govern, s.handleGetWebhooks))
	api.Post("/webhooks", q(govern, s.handleAddWebhook))
	api.Get("/webhooks/:webhookId", q(govern, s.handleGetWebhook))
	api.Patch("/webhooks/:webhookId", q(govern, s.handleUpdateWebhook))
	api.Delete("/webhooks/:webhookId", q(govern, s.handleDeleteWebhook))
	api.Get("/webhooks/:webhookId/tags", q(govern, s.handleGetWebhookTags))
	api.Post("/webhooks/:webhookId/tags", q(govern, s.handleAddWebhookTag))
	api.Post("/private/webhooks/*", q(write, s.handlePrivateWebhook))
	api.Get("/objects/examine/pdf", q(write, s.handleGetExaminePdfURL))
	api.Get("/objects/examine/:id/pdf", q(read, s.handleGetExaminePdf))
	api.Post("/shortlinks", q(write, s.handleAddShortlink))
	api.Delete("/shortlinks/:slug", q(write, s.handleDeleteShortlink))

	// Numbering sequences (Quire's own API, see API.md).
	api.Get("/sites/:siteId/sequences", sp(read, s.handleGetSequences))
	api.Post("/sites/:siteId/sequences", sp(govern, s.handleAddSequence))
	api.Get("/sites/:siteId/sequences/:sequenceId", sp(read, s.handleGetSequence))
	api.Delete("/sites/:siteId/sequences/:sequenceId", sp(govern, s.handleDeleteSequence))
	api.Post("/sites/:siteId/sequences/:sequenceId/next", sp(write, s.handleNextSequenceValue))

	// FormKiQ routes Quire refuses on purpose: 501 with the reason
	// (refused.go).
	for _, r := range refusedRoutes {
		api.Add(r.method, r.path, none(notServed(r.reason)))
	}
	// Scanner intake (Quire's own API, see API.md "Scanner intake").
	api.Get("/sites/:siteId/intakeProfiles", sp(govern, s.handleGetIntakeProfiles))
	api.Post("/sites/:siteId/intakeProfiles", sp(govern, s.handleAddIntakeProfile))
	api.Get("/sites/:siteId/intakeProfiles/:name", sp(govern, s.handleGetIntakeProfile))
	api.Put("/sites/:siteId/intakeProfiles/:name", sp(govern, s.handleSetIntakeProfile))
	api.Delete("/sites/:siteId/intakeProfiles/:name", sp(govern, s.handleDeleteIntakeProfile))
	api.Get("/sites/:siteId/intakeProfiles/:name/errors", sp(govern, s.handleGetIntakeErrors))
	api.Post("/sites/:siteId/intake/:name", sp(write, s.handlePostIntake))

	// Anything else is FormKiQ's "request handler not found".
	if testRoutes != nil {
		testRoutes(a)
	}
	a.Use(func(c *fiber.Ctx) error { return fiber.ErrNotFound })
}
