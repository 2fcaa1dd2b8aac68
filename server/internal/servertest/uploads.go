package servertest

import (
	"net/http"

	"quire/quiretest"
)

// Put uploads body to a signed URL as a client with no content type would.
func Put(s *quiretest.Server, u string, body any) *quiretest.Response {
	return s.DoHeaders(http.MethodPut, u, body, "", map[string]string{"Content-Type": "application/octet-stream"})
}
