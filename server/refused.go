package server

import (
	"net/http"

	"quire/server/internal/api"
)

// FormKiQ 1.19.1 routes Quire refuses on purpose (issue 33 item 7): each
// answers 501 {"message": <reason>} to a signed-in caller instead of
// FormKiQ's "request handler not found", so a client learns why. They are
// registered from this one table (routes.go) and listed in API.md
// ("Routes Quire refuses on purpose"); TestReferenceSweep_EveryRouteAnswers
// walks every reference operation and finds one left unrouted.

const (
	reasonOPA = "OPA access policies are not supported: Quire has no Open Policy Agent; " +
		"use folder permissions (PUT /folders/permissions) and site groups"
	reasonOpenSearch = "OpenSearch index administration is not supported: Quire's fulltext index " +
		"is built in (no OpenSearch service); use POST /reindex/documents/{documentId} to rebuild a document's entry"
	reasonGoogleDrive = "Google Drive export is not supported: Quire runs on premises without a Google Workspace connection"
	reasonAIRoute     = "this add-on route is not served: run the prompt with POST /documents/{documentId}/actions " +
		"(type LLMPROMPT, DATA_CLASSIFICATION or METADATA_EXTRACTION); results are read with the GET routes"
)

// refusedRoute is one FormKiQ route Quire does not serve, in fiber's
// path syntax.
type refusedRoute struct {
	method, path, reason string
}

// refusedRoutes is the registry of routes refused on purpose.
var refusedRoutes = []refusedRoute{
	{"GET", "/sites/opa/accessPolicies", reasonOPA},
	{"GET", "/sites/:siteId/opa/accessPolicy", reasonOPA},
	{"GET", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA},
	{"PUT", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA},
	{"DELETE", "/sites/:siteId/opa/accessPolicy/policyItems", reasonOPA},

	{"GET", "/sites/global/opensearch/indices", reasonOpenSearch},
	{"DELETE", "/sites/global/opensearch/indices/:indexName", reasonOpenSearch},
	{"GET", "/sites/global/opensearch/snapshotRepositories", reasonOpenSearch},
	{"POST", "/sites/global/opensearch/snapshotRepositories/:repositoryName/cleanup", reasonOpenSearch},
	{"GET", "/sites/:siteId/opensearch/index", reasonOpenSearch},
	{"PUT", "/sites/:siteId/opensearch/index", reasonOpenSearch},
	{"DELETE", "/sites/:siteId/opensearch/index", reasonOpenSearch},
	{"GET", "/sites/:siteId/opensearch/indices", reasonOpenSearch},
	{"PUT", "/sites/:siteId/opensearch/indices", reasonOpenSearch},
	{"GET", "/sites/:siteId/opensearch/snapshotRepository", reasonOpenSearch},
	{"DELETE", "/sites/:siteId/opensearch/snapshotRepository", reasonOpenSearch},
	{"GET", "/sites/:siteId/opensearch/snapshots", reasonOpenSearch},
	{"GET", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch},
	{"POST", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch},
	{"DELETE", "/sites/:siteId/opensearch/snapshots/:snapshotName", reasonOpenSearch},
	{"POST", "/sites/:siteId/opensearch/snapshots/:snapshotName/restore", reasonOpenSearch},
	{"DELETE", "/sites/:siteId/opensearch/snapshots/:snapshotName/restore", reasonOpenSearch},

	{"POST", "/integrations/google/drive/documents/:documentId/export", reasonGoogleDrive},

	{"POST", "/documents/:documentId/ai/prompts/:llmPromptEntityName", reasonAIRoute},
	{"POST", "/documents/:documentId/metadataExtractionResults/:llmPromptEntityName", reasonAIRoute},
	{"PUT", "/documents/:documentId/dataClassification", reasonAIRoute},
}

// notServed answers a refused route.
func notServed(reason string) api.Handler {
	return func(*api.Request) error { return api.ErrStatus(http.StatusNotImplemented, reason) }
}
