package documents_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/server/internal/testhooks"
)

// lockStep is one request of a checkout or legal-hold walk, by one caller.
type lockStep struct {
	name, who, method, path string
	body                    any
	want                    int
	resp                    string // "" any body; "~x" contains x; else exact
}

func runLockSteps(t *testing.T, s *quiretest.Server, toks map[string]string, site string, steps []lockStep) {
	t.Helper()
	for _, st := range steps {
		r := s.Do(st.method, st.path+servertest.Sep(st.path)+strings.TrimPrefix(site, "?"), st.body, toks[st.who])
		if r.Status != st.want {
			t.Fatalf("%s (%s): status %d, want %d: %s", st.name, st.who, r.Status, st.want, r.Body)
		}
		got := strings.TrimSpace(string(r.Body))
		switch {
		case st.resp == "":
		case strings.HasPrefix(st.resp, "~"):
			if !strings.Contains(got, st.resp[1:]) {
				t.Fatalf("%s: body %s does not contain %s", st.name, got, st.resp[1:])
			}
		case got != st.resp:
			t.Fatalf("%s: body %s\nwant %s", st.name, got, st.resp)
		}
	}
}

func lockTokens(s *quiretest.Server) map[string]string {
	return map[string]string{
		"alice":  s.Token("alice", "default", "finance"),
		"bob":    s.Token("bob", "default", "finance"),
		"gina":   s.Token("gina", "default_govern", "finance_govern"),
		"admin":  s.Admin(),
		"reader": s.Token("rita", "default_read", "finance_read"),
	}
}

// TestCheckout_Routes walks checkout, check-in and the refusals that come
// with them on both sites: while alice has a document checked out, bob
// cannot change its content, move or delete it, nor check it out or in;
// tags stay writable; an administrator can check it in for her.
func TestCheckout_Routes(t *testing.T) {
	s := quiretest.NewServer(t)
	toks := lockTokens(s)
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, toks["alice"], site.Query, map[string]any{"path": "co/contract.txt", "content": "v1", "contentType": "text/plain"})
			doc := "/documents/" + id
			runLockSteps(t, s, toks, site.Query, []lockStep{
				{"check out", "alice", "PUT", doc + "/checkout", nil, 200, fmt.Sprintf(`{"message":"Document '%s' checked out"}`, id)},
				{"again by the holder", "alice", "PUT", doc + "/checkout", nil, 200, ""},
				{"lock shows", "bob", "GET", doc + "/attributes", nil, 200, `~"key":"LockedBy","stringValue":"alice"`},
				{"checkout flag shows", "bob", "GET", doc + "/attributes/Checkout", nil, 200, `~"booleanValue":true`},
				{"date shows", "bob", "GET", doc + "/attributes/LockedDate", nil, 200, `~"LockedDate"`},
				{"others cannot check out", "bob", "PUT", doc + "/checkout", nil, 409, fmt.Sprintf(`{"message":"document '%s' is already checked out by 'alice'"}`, id)},
				{"others cannot change content", "bob", "PATCH", doc, map[string]any{"content": "bob's"}, 409, fmt.Sprintf(`{"message":"document '%s' is checked out by 'alice'"}`, id)},
				{"others cannot move", "bob", "PATCH", doc, map[string]any{"path": "co/moved.txt"}, 409, "~checked out by 'alice'"},
				{"others cannot delete", "bob", "DELETE", doc, nil, 409, "~checked out by 'alice'"},
				{"others cannot soft delete", "bob", "DELETE", doc + "?softDelete=true", nil, 409, "~checked out by 'alice'"},
				{"others cannot check in", "bob", "DELETE", doc + "/checkout", nil, 409, "~checked out by 'alice'"},
				{"others can tag", "bob", "POST", doc + "/tags", map[string]any{"key": "seen", "value": "bob"}, 201, ""},
				{"lock attributes are not written by key", "alice", "PUT", doc + "/attributes", map[string]any{"attributes": []any{map[string]any{"key": "LockedBy", "stringValue": "mallory"}}}, 400,
					`{"errors":[{"key":"LockedBy","error":"'LockedBy' is a reserved attribute name"}]}`},
				{"nor removed by key", "alice", "DELETE", doc + "/attributes/Checkout", nil, 400,
					`{"errors":[{"key":"Checkout","error":"'Checkout' is a reserved attribute name"}]}`},
				{"nor defined", "admin", "POST", "/attributes", map[string]any{"attribute": map[string]any{"key": "LockedDate", "dataType": "STRING"}}, 400, "~reserved attribute name"},
				{"the holder changes content", "alice", "PATCH", doc, map[string]any{"content": "v2", "contentType": "text/plain"}, 200, ""},
				{"content is the holder's", "bob", "GET", doc + "/content", nil, 200, `~v2`},
				{"still locked after", "bob", "GET", doc + "/attributes/LockedBy", nil, 200, `~"alice"`},
				{"check in", "alice", "DELETE", doc + "/checkout", nil, 200, fmt.Sprintf(`{"message":"Document '%s' checked in"}`, id)},
				{"lock gone", "bob", "GET", doc + "/attributes/LockedBy", nil, 404, ""},
				{"check in again", "alice", "DELETE", doc + "/checkout", nil, 200, ""},
				{"bob checks out", "bob", "PUT", doc + "/checkout", nil, 200, ""},
				{"alice refused now", "alice", "PATCH", doc, map[string]any{"content": "v3"}, 409, "~checked out by 'bob'"},
				{"an admin checks in for bob", "admin", "DELETE", doc + "/checkout", nil, 200, ""},
				{"alice writes again", "alice", "PATCH", doc, map[string]any{"content": "v3"}, 200, ""},
				{"unknown document", "alice", "PUT", "/documents/00000000-0000-4000-8000-000000000000/checkout", nil, 404, ""},
				{"read-only caller", "reader", "PUT", doc + "/checkout", nil, 401, ""},
			})
			// An artifact is checked out on its own; its document stays free.
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": id, "artifacts": true, "content": "a1", "contentType": "text/plain"}, toks["alice"])
			servertest.MustStatus(t, r, http.StatusCreated)
			art := "artifactId=" + quiretest.Str(t, r.JSON(t), "artifactId")
			runLockSteps(t, s, toks, site.Query, []lockStep{
				{"check out the artifact", "alice", "PUT", doc + "/checkout?" + art, nil, 200, ""},
				{"its lock shows", "bob", "GET", doc + "/attributes/LockedBy?" + art, nil, 200, `~"alice"`},
				{"others cannot change it", "bob", "PATCH", doc + "?" + art, map[string]any{"content": "a2"}, 409, "~checked out by 'alice'"},
				{"nor delete it", "bob", "DELETE", doc + "?" + art, nil, 409, "~checked out by 'alice'"},
				{"the document is free", "bob", "PATCH", doc, map[string]any{"content": "v4", "contentType": "text/plain"}, 200, ""},
				{"the document has no lock", "bob", "GET", doc + "/attributes/LockedBy", nil, 404, ""},
				{"check the artifact in", "alice", "DELETE", doc + "/checkout?" + art, nil, 200, ""},
				{"then others change it", "bob", "PATCH", doc + "?" + art, map[string]any{"content": "a2"}, 200, ""},
			})
		})
	}
}

// TestCheckout_ReplaceKeepsLock: replacing all of a document's attributes
// keeps its lock, which only the checkout routes change.
func TestCheckout_ReplaceKeepsLock(t *testing.T) {
	s := quiretest.NewServer(t)
	toks := lockTokens(s)
	servertest.DefineAttr(t, s, toks["admin"], "", "color", "STRING", nil)
	id := servertest.AddDoc(t, s, toks["alice"], "", map[string]any{"path": "co/replace.txt", "content": "x"})
	runLockSteps(t, s, toks, "", []lockStep{
		{"check out", "alice", "PUT", "/documents/" + id + "/checkout", nil, 200, ""},
		{"replace all", "alice", "PUT", "/documents/" + id + "/attributes", map[string]any{"attributes": []any{map[string]any{"key": "color", "stringValue": "red"}}}, 200, ""},
		{"lock kept", "alice", "GET", "/documents/" + id + "/attributes/LockedBy", nil, 200, `~"alice"`},
		{"new value there", "alice", "GET", "/documents/" + id + "/attributes/color", nil, 200, `~"red"`},
		{"found by the lock attribute", "alice", "POST", "/search", map[string]any{"query": map[string]any{"attribute": map[string]any{"key": "LockedBy", "eq": "alice"}}}, 200, `~"` + id + `"`},
	})
}

// TestLegalHold_EveryMutatingRouteRefused puts documents under legal hold
// and tries each route and action that deletes, purges, moves or changes
// the content of a document or its artifacts and versions, as an
// administrator: each is refused with 409 and changes nothing; on a
// document without a hold each succeeds. Only a governor sets and lifts
// the hold, after which the change goes through.
func TestLegalHold_EveryMutatingRouteRefused(t *testing.T) {
	s := servertest.PipelineServer(t)
	toks := lockTokens(s)
	tok := toks["admin"]
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			t.Parallel() // each site its own documents, folders and hold
			doc := func(id, extra string) string { return "/documents/" + id + extra + site.Query }
			// fixture is a document with an older version and an artifact.
			type fixture struct{ id, art, oldVersion string }
			routes := []struct {
				name string
				do   func(t *testing.T, f fixture, folder string) *quiretest.Response
			}{
				{"delete", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(f.id, ""), nil, tok)
				}},
				{"soft delete", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, "/documents/"+f.id+servertest.Query(site.Query, "softDelete=true"), nil, tok)
				}},
				{"purge", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(f.id, "/purge"), nil, tok)
				}},
				{"path change", func(t *testing.T, f fixture, folder string) *quiretest.Response {
					return s.Do(http.MethodPatch, doc(f.id, ""), map[string]any{"path": folder + "/renamed.txt"}, tok)
				}},
				{"inline content", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodPatch, doc(f.id, ""), map[string]any{"content": "changed"}, tok)
				}},
				{"upload", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					r := s.Do(http.MethodGet, doc(f.id, "/upload"), nil, tok)
					servertest.MustStatus(t, r, http.StatusOK)
					return servertest.Put(s, quiretest.Str(t, r.JSON(t), "url"), "uploaded content")
				}},
				{"version restore", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodPut, doc(f.id, "/versions"), map[string]any{"versionKey": f.oldVersion}, tok)
				}},
				{"version delete", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, doc(f.id, "/versions/"+f.oldVersion), nil, tok)
				}},
				{"artifact delete", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodDelete, "/documents/"+f.id+servertest.Query(site.Query, "artifactId="+f.art), nil, tok)
				}},
				{"artifact content", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodPatch, "/documents/"+f.id+servertest.Query(site.Query, "artifactId="+f.art), map[string]any{"content": "changed"}, tok)
				}},
				{"promote artifact", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodPut, doc(f.id, "/artifacts/promoteArtifact"), map[string]any{"artifactId": f.art}, tok)
				}},
				{"folder move", func(t *testing.T, _ fixture, folder string) *quiretest.Response {
					return s.Do(http.MethodPost, "/indices/folder/move"+site.Query, map[string]any{"source": folder, "target": "moved-" + folder + "/"}, tok)
				}},
				{"checkout by another", func(t *testing.T, f fixture, _ string) *quiretest.Response {
					return s.Do(http.MethodPut, doc(f.id, "/checkout"), nil, toks["bob"])
				}},
			}
			setup := func(t *testing.T, folder string, held bool) fixture {
				t.Helper()
				// No default processing ("actions": []): the action tests
				// below look at the one action they add.
				f := fixture{id: servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": folder + "/doc.txt", "content": "old", "contentType": "text/plain", "actions": []any{}})}
				servertest.MustStatus(t, s.Do(http.MethodPatch, doc(f.id, ""), map[string]any{"content": "kept", "contentType": "text/plain", "actions": []any{}}, tok), http.StatusOK)
				vs := s.Do(http.MethodGet, doc(f.id, "/versions"), nil, tok)
				servertest.MustStatus(t, vs, http.StatusOK)
				if vl := quiretest.List(t, vs.JSON(t), "documents"); len(vl) == 2 {
					f.oldVersion = quiretest.Str(t, quiretest.Obj(t, vl[1]), "versionKey") // newest first
				} else {
					t.Fatalf("versions: %s", vs.Body)
				}
				r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": f.id, "artifacts": true, "content": "artifact", "contentType": "text/plain"}, tok)
				servertest.MustStatus(t, r, http.StatusCreated)
				f.art = quiretest.Str(t, r.JSON(t), "artifactId")
				if held {
					servertest.MustStatus(t, s.Do(http.MethodPut, doc(f.id, "/legalHold"), nil, toks["gina"]), http.StatusOK)
				}
				return f
			}
			for _, rt := range routes {
				for _, held := range []bool{true, false} {
					folder := fmt.Sprintf("%s-%v", strings.ReplaceAll(rt.name, " ", "-"), held)
					f := setup(t, folder, held)
					r := rt.do(t, f, folder)
					if !held {
						if r.Status >= 300 {
							t.Errorf("%s without a hold: %d %s", rt.name, r.Status, r.Body)
						}
						continue
					}
					if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "is under legal hold") {
						t.Errorf("%s under legal hold: %d %s, want 409", rt.name, r.Status, r.Body)
					}
					checkHeld(t, s, tok, site.Query, f.id, f.art, folder+"/doc.txt")
				}
			}
			// The MOVE and DELETE actions fail on a held document.
			for _, act := range []map[string]any{
				{"type": "MOVE", "parameters": map[string]any{"path": "archive/"}},
				{"type": "DELETE", "parameters": map[string]any{"deleteType": "SOFT_DELETE"}},
				{"type": "DELETE", "parameters": map[string]any{"deleteType": "PURGE"}},
			} {
				folder := "actions/" + fmt.Sprint(act["parameters"])
				f := setup(t, folder, true)
				servertest.MustStatus(t, s.Do(http.MethodPost, doc(f.id, "/actions"), map[string]any{"actions": []any{act}}, tok), http.StatusOK)
				st := servertest.WaitActions(t, s, tok, site.Query, f.id)
				if len(st) != 1 || st[0] != "FAILED" {
					t.Errorf("%s action under legal hold: %v, want FAILED", act["type"], st)
				}
				checkHeld(t, s, tok, site.Query, f.id, f.art, folder+"/doc.txt")
			}
			// Setting and lifting the hold is for governors; then the change goes through.
			f := setup(t, "lift", true)
			runLockSteps(t, s, toks, site.Query, []lockStep{
				{"hold shows", "bob", "GET", "/documents/" + f.id + "/attributes/CheckoutForLegalHold", nil, 200, `~"booleanValue":true`},
				{"held by", "bob", "GET", "/documents/" + f.id + "/attributes/LockedBy", nil, 200, `~"gina"`},
				{"a writer cannot set a hold", "bob", "PUT", "/documents/" + f.id + "/legalHold", nil, 401, ""},
				{"a writer cannot lift it", "bob", "DELETE", "/documents/" + f.id + "/legalHold", nil, 401, ""},
				{"checkin does not lift it", "admin", "DELETE", "/documents/" + f.id + "/checkout", nil, 409, "~is under legal hold"},
				{"the holder cannot delete either", "gina", "DELETE", "/documents/" + f.id, nil, 409, "~is under legal hold"},
				{"lift", "gina", "DELETE", "/documents/" + f.id + "/legalHold", nil, 200, fmt.Sprintf(`{"message":"Legal hold removed from document '%s'"}`, f.id)},
				{"attributes gone", "bob", "GET", "/documents/" + f.id + "/attributes/CheckoutForLegalHold", nil, 404, ""},
				{"delete goes through", "bob", "DELETE", "/documents/" + f.id, nil, 200, ""},
			})
		})
	}
}

// checkHeld asserts that a refused change left a held document, its
// content, path, artifact and hold as they were.
func checkHeld(t *testing.T, s *quiretest.Server, tok, site, id, art, path string) {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+site, nil, tok)
	if r.Status != http.StatusOK {
		t.Errorf("%s after refusal: %d %s", id, r.Status, r.Body)
		return
	}
	if got := quiretest.Str(t, r.JSON(t), "path"); got != path {
		t.Errorf("%s path after refusal = %q, want %q", id, got, path)
	}
	if p, ok := r.JSON(t)["promotedArtifactId"]; ok && p != "" {
		t.Errorf("%s promoted %v after refusal", id, p)
	}
	c := s.Do(http.MethodGet, "/documents/"+id+"/content"+site, nil, tok)
	if c.Status != http.StatusOK || !strings.Contains(string(c.Body), "kept") {
		t.Errorf("%s content after refusal: %d %s", id, c.Status, c.Body)
	}
	a := s.Do(http.MethodGet, "/documents/"+id+"/content"+servertest.Query(site, "artifactId="+art), nil, tok)
	if a.Status != http.StatusOK || !strings.Contains(string(a.Body), "artifact") {
		t.Errorf("%s artifact content after refusal: %d %s", id, a.Status, a.Body)
	}
	v := s.Do(http.MethodGet, "/documents/"+id+"/versions"+site, nil, tok)
	if v.Status != http.StatusOK || len(quiretest.List(t, v.JSON(t), "documents")) != 2 {
		t.Errorf("%s versions after refusal: %d %s", id, v.Status, v.Body)
	}
	h := s.Do(http.MethodGet, "/documents/"+id+"/attributes/CheckoutForLegalHold"+site, nil, tok)
	if h.Status != http.StatusOK {
		t.Errorf("%s hold after refusal: %d %s", id, h.Status, h.Body)
	}
}

// TestReviews_SupersededByContentChange: changing a document's (or an
// artifact's) content closes its open reviews as SUPERSEDED in the same
// write; a completed review stays COMPLETED, and a superseded one takes
// no decision.
func TestReviews_SupersededByContentChange(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "sup/doc.txt", "content": "v1", "contentType": "text/plain"})
			base := "/documents/" + id + "/reviews"
			open := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 2})
			done := servertest.AddReview(t, s, tok, base+site.Query, map[string]any{"reviewCategory": "legal", "requiredDecisions": 1})
			servertest.MustStatus(t, s.Do(http.MethodPost, base+"/"+done+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "APPROVAL", "decision": "APPROVED"}}, tok), http.StatusCreated)
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": id, "artifacts": true, "content": "a1", "contentType": "text/plain"}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			art := quiretest.Str(t, r.JSON(t), "artifactId")
			artReview := servertest.AddReview(t, s, tok, base+servertest.Query(site.Query, "artifactId="+art), map[string]any{"reviewCategory": "legal", "requiredDecisions": 1})

			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"metadata": []any{map[string]any{"key": "m", "value": "v"}}}, tok), http.StatusOK)
			if got := servertest.ReviewStatus(t, s, tok, base+"/"+open+site.Query); got != "PENDING" {
				t.Fatalf("after a metadata change: %s, want PENDING", got)
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"content": "v2"}, tok), http.StatusOK)
			if got := servertest.ReviewStatus(t, s, tok, base+"/"+open+site.Query); got != "SUPERSEDED" {
				t.Errorf("open review after a content change: %s, want SUPERSEDED", got)
			}
			if got := servertest.ReviewStatus(t, s, tok, base+"/"+done+site.Query); got != "COMPLETED" {
				t.Errorf("completed review after a content change: %s, want COMPLETED", got)
			}
			if got := servertest.ReviewStatus(t, s, tok, base+"/"+artReview+servertest.Query(site.Query, "artifactId="+art)); got != "PENDING" {
				t.Errorf("artifact review after the document's change: %s, want PENDING", got)
			}
			d := s.Do(http.MethodPost, base+"/"+open+"/decisions"+site.Query, map[string]any{"decision": map[string]any{"type": "APPROVAL", "decision": "APPROVED"}}, tok)
			if d.Status != http.StatusConflict || !strings.Contains(string(d.Body), "is SUPERSEDED") {
				t.Errorf("decision on a superseded review: %d %s", d.Status, d.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+servertest.Query(site.Query, "artifactId="+art), map[string]any{"content": "a2"}, tok), http.StatusOK)
			if got := servertest.ReviewStatus(t, s, tok, base+"/"+artReview+servertest.Query(site.Query, "artifactId="+art)); got != "SUPERSEDED" {
				t.Errorf("artifact review after the artifact's change: %s, want SUPERSEDED", got)
			}
		})
	}
}

// TestLegalHold_FolderMoveAllOrNothing: a move of a folder whose last
// document (several move steps in) is under legal hold is refused before
// its first step, so no document moves.
func TestLegalHold_FolderMoveAllOrNothing(t *testing.T) {
	// A move of 20 documents a step: the held document, last in the
	// folder, is in the third step, as it was among 450 documents at the
	// 200 of a production step, at a tenth of the documents to create
	// and read back (issue 45).
	testhooks.SetMoveStep(20)
	t.Cleanup(func() { testhooks.SetMoveStep(0) })
	s := quiretest.NewServer(t)
	toks := lockTokens(s)
	admin := toks["admin"]
	ids := servertest.AddDocs(t, s, admin, "", 45, func(i int) any {
		return map[string]any{"path": fmt.Sprintf("big/f%04d.txt", i), "content": "x"}
	})
	held := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "big/zz-held.txt", "content": "x"})
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+held+"/legalHold", nil, toks["gina"]), http.StatusOK)
	r := s.Do(http.MethodPost, "/indices/folder/move", map[string]any{"source": "big", "target": "moved/"}, admin)
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), "is under legal hold") {
		t.Fatalf("move over a held document: %d %s, want 409", r.Status, r.Body)
	}
	for _, id := range append(ids, held) {
		d := s.Do(http.MethodGet, "/documents/"+id, nil, admin)
		if p := quiretest.Str(t, d.JSON(t), "path"); !strings.HasPrefix(p, "big/") {
			t.Fatalf("document %s moved to %s by a refused move", id, p)
		}
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+held+"/legalHold", nil, toks["gina"]), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/indices/folder/move", map[string]any{"source": "big", "target": "moved/"}, admin), http.StatusOK)
	if p := quiretest.Str(t, s.Do(http.MethodGet, "/documents/"+held, nil, admin).JSON(t), "path"); p != "moved/big/zz-held.txt" {
		t.Errorf("after the hold: %s", p)
	}
}
