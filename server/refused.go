package server

import (
	"net/http"

	"quire/server/internal/api"
)

// FormKiQ 1.19.1 routes Quire refuses on purpose (issue 33 item 7): each
// answers 501 {"message": <reason>} to a signed-in caller instead of
// FormKiQ's "request handler not found", so a client learns why. They are
// rows of the one route table (routes.go, refusedRow) and listed in API.md
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

// notServed answers a refused route.
func notServed(reason string) api.Handler {
	return func(*api.Request) error { return api.ErrStatus(http.StatusNotImplemented, reason) }
}
