package servertest

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

// AddArtifact posts an artifact of doc and returns its artifactId.
func AddArtifact(t *testing.T, s *quiretest.Server, tok, site, doc string, body map[string]any) string {
	t.Helper()
	body["documentId"], body["artifacts"] = doc, true
	r := s.Do(http.MethodPost, "/documents"+site, body, tok)
	MustStatus(t, r, http.StatusCreated)
	b := r.JSON(t)
	if got := quiretest.Str(t, b, "documentId"); got != doc {
		t.Fatalf("documentId = %q, want the document's %q", got, doc)
	}
	art := quiretest.Str(t, b, "artifactId")
	if art == "" || art == doc {
		t.Fatalf("artifactId = %q", art)
	}
	return art
}
