package documents_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// addRetentionPolicy creates a RetentionPolicy entity and returns its id.
func addRetentionPolicy(t *testing.T, s *quiretest.Server, tok, site, mode string, days float64) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/entities/RetentionPolicy"+servertest.Query(site, "namespace=PRESET"), map[string]any{"entity": map[string]any{
		"name": mode, "attributes": []map[string]any{{"key": "RetentionMode", "stringValue": mode}, {"key": "RetentionPeriodInDays", "numberValue": days}},
	}}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	return quiretest.Str(t, r.JSON(t), "entityId")
}

func policyAttr(id string) map[string]any {
	return map[string]any{"key": "RetentionPolicy", "entityTypeId": "RetentionPolicy", "entityId": id, "namespace": "PRESET"}
}

// TestGovernance_EveryMutatingRouteAndActionRefused tries each route and
// action that deletes, purges, moves or changes the content of a
// document, or removes its retention, as an administrator: on a document
// under GOVERNANCE retention each is refused with 409 and changes
// nothing; on one under RETENTION_ONLY each succeeds.
func TestGovernance_EveryMutatingRouteAndActionRefused(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			gov := addRetentionPolicy(t, s, tok, site.Query, "GOVERNANCE", 30)
			keep := addRetentionPolicy(t, s, tok, site.Query, "RETENTION_ONLY", 30)
			other := addRetentionPolicy(t, s, tok, site.Query, "RETENTION_ONLY", 1)
			type route struct {
				name string
				// do changes document id at path and returns the answer.
				do func(t *testing.T, id, folder string) *quiretest.Response
			}
			doc := func(id, extra string) string { return "/documents/" + id + extra + site.Query }
			routes := []route{
				{"delete", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(id, ""), nil, tok)
				}},
				{"soft delete", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, "/documents/"+id+servertest.Query(site.Query, "softDelete=true"), nil, tok)
				}},
				{"purge", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(id, "/purge"), nil, tok)
				}},
				{"path change", func(t *testing.T, id, folder string) *quiretest.Response {
					return s.Do(http.MethodPatch, doc(id, ""), map[string]any{"path": folder + "/renamed.txt"}, tok)
				}},
				{"inline content", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodPatch, doc(id, ""), map[string]any{"content": "changed"}, tok)
				}},
				{"upload", func(t *testing.T, id, _ string) *quiretest.Response {
					r := s.Do(http.MethodGet, doc(id, "/upload"), nil, tok)
					servertest.MustStatus(t, r, http.StatusOK)
					return servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), "uploaded content")
				}},
				{"remove retention attribute", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(id, "/attributes/RetentionPolicy"), nil, tok)
				}},
				{"change retention policy", func(t *testing.T, id, _ string) *quiretest.Response {
					return s.Do(http.MethodPatch, doc(id, ""), map[string]any{"attributes": []any{policyAttr(other)}}, tok)
				}},
				{"folder move", func(t *testing.T, _, folder string) *quiretest.Response {
					return s.Do(http.MethodPost, "/indices/folder/move"+site.Query, map[string]any{"source": folder, "target": "moved-" + folder + "/"}, tok)
				}},
			}
			for _, rt := range routes {
				for _, mode := range []string{"GOVERNANCE", "RETENTION_ONLY"} {
					pol := map[string]string{"GOVERNANCE": gov, "RETENTION_ONLY": keep}[mode]
					folder := strings.ReplaceAll(rt.name, " ", "-") + "-" + mode
					id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": folder + "/doc.txt", "content": "kept", "contentType": "text/plain",
						"attributes": []any{policyAttr(pol)}})
					r := rt.do(t, id, folder)
					if mode == "RETENTION_ONLY" {
						if r.Status >= 300 {
							t.Errorf("%s under RETENTION_ONLY: %d %s", rt.name, r.Status, r.Body)
						}
						continue
					}
					if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "is under GOVERNANCE retention until") {
						t.Errorf("%s under GOVERNANCE: %d %s, want 409", rt.name, r.Status, r.Body)
					}
					checkUnchanged(t, s, tok, site.Query, id, folder+"/doc.txt", gov)
				}
			}
			// The MOVE and DELETE actions fail on the governed document.
			for _, act := range []map[string]any{
				{"type": "MOVE", "parameters": map[string]any{"path": "archive/"}},
				{"type": "DELETE", "parameters": map[string]any{"deleteType": "SOFT_DELETE"}},
				{"type": "DELETE", "parameters": map[string]any{"deleteType": "HARD_DELETE"}},
				{"type": "DELETE", "parameters": map[string]any{"deleteType": "PURGE"}},
			} {
				for _, mode := range []string{"GOVERNANCE", "RETENTION_ONLY"} {
					pol := map[string]string{"GOVERNANCE": gov, "RETENTION_ONLY": keep}[mode]
					path := "actions-" + mode + "/" + fmt.Sprint(act["type"], act["parameters"]) + ".txt"
					id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": path, "content": "kept", "contentType": "text/plain",
						"attributes": []any{policyAttr(pol)}, "actions": []any{act}})
					if hard := fmt.Sprint(act["parameters"]) != "map[deleteType:SOFT_DELETE]" && act["type"] == "DELETE"; hard && mode == "RETENTION_ONLY" {
						// The document goes with its actions.
						waitGone(t, s, tok, site.Query, id)
						continue
					}
					st := servertest.WaitActions(t, s, tok, site.Query, id)
					want := map[string]string{"GOVERNANCE": "FAILED", "RETENTION_ONLY": "COMPLETE"}[mode]
					if len(st) != 1 || st[0] != want {
						t.Errorf("%s action under %s: %v, want %s", act["type"], mode, st, want)
					}
					if mode == "GOVERNANCE" {
						checkUnchanged(t, s, tok, site.Query, id, path, gov)
					}
				}
			}
			// Tags stay writable on a governed document.
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tags/doc.txt", "content": "kept", "attributes": []any{policyAttr(gov)}})
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/tags"+site.Query, map[string]any{"key": "reviewed", "value": "yes"}, tok), http.StatusCreated)
		})
	}
}

// checkUnchanged asserts that a refused change left the governed
// document, its content and its retention attributes as they were.
func checkUnchanged(t *testing.T, s *quiretest.Server, tok, site, id, path, policy string) {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+site, nil, tok)
	if r.Status != http.StatusOK {
		t.Errorf("%s after refusal: %d %s", id, r.Status, r.Body)
		return
	}
	if got := quiretest.Str(t, r.JSON(t), "path"); got != path {
		t.Errorf("%s path after refusal = %q, want %q", id, got, path)
	}
	c := s.Do(http.MethodGet, "/documents/"+id+"/content"+site, nil, tok)
	if c.Status != http.StatusOK || !strings.Contains(string(c.Body), "kept") {
		t.Errorf("%s content after refusal: %d %s", id, c.Status, c.Body)
	}
	a := s.Do(http.MethodGet, "/documents/"+id+"/attributes"+site, nil, tok)
	for _, want := range []string{`"RetentionPolicy"`, `"` + policy + `"`, `"RetentionEffectiveEndDate"`, `"RetentionEffectiveStatus"`, `"ACTIVE"`} {
		if !strings.Contains(string(a.Body), want) {
			t.Errorf("%s attributes after refusal lack %s: %s", id, want, a.Body)
		}
	}
}

// waitGone polls until the document is gone (bounded: 60 s).
func waitGone(t *testing.T, s *quiretest.Server, tok, site, id string) {
	t.Helper()
	for range 1200 {
		if s.Do(http.MethodGet, "/documents/"+id+site, nil, tok).Status == http.StatusNotFound {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("document %s still there after 60s", id)
}
