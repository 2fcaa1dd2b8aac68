package servertest

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// SetSiteConfig patches a site's configuration and wants a 200.
func SetSiteConfig(t *testing.T, s *quiretest.Server, tok, site string, body map[string]any) {
	t.Helper()
	name := strings.TrimPrefix(site, "?siteId=")
	if name == "" {
		name = "default"
	}
	MustStatus(t, s.Do(http.MethodPatch, "/sites/"+name+"/configuration", body, tok), http.StatusOK)
}
