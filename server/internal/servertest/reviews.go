package servertest

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

func AddReview(t *testing.T, s *quiretest.Server, tok, path string, review map[string]any) string {
	t.Helper()
	r := s.Do(http.MethodPost, path, map[string]any{"review": review}, tok)
	MustStatus(t, r, http.StatusCreated)
	id := quiretest.Str(t, r.JSON(t), "reviewId")
	if id == "" {
		t.Fatalf("no reviewId: %s", r.Body)
	}
	return id
}

func ReviewStatus(t *testing.T, s *quiretest.Server, tok, path string) string {
	t.Helper()
	r := s.Do(http.MethodGet, path, nil, tok)
	MustStatus(t, r, http.StatusOK)
	return quiretest.Str(t, quiretest.Obj(t, r.JSON(t)["review"]), "reviewStatus")
}
