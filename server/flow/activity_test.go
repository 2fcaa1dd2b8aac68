package flow_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// activityRow is the part of a trail entry the tests compare.
type activityRow struct{ typ, user, source string }

func (a activityRow) String() string { return a.typ + "/" + a.user + "/" + a.source }

// readTrail pages through a trail listing two entries at a time and
// returns its rows, newest first, and the raw entries.
func readTrail(t *testing.T, s *quiretest.Server, tok, path string) ([]activityRow, []map[string]any) {
	t.Helper()
	var rows []activityRow
	var raw []map[string]any
	next := ""
	for range 100 {
		p := path + servertest.Sep(path) + "limit=2"
		if next != "" {
			p += "&next=" + next
		}
		r := s.Do(http.MethodGet, p, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		m := r.JSON(t)
		for _, e := range quiretest.List(t, m, "userActivities") {
			o := quiretest.Obj(t, e)
			raw = append(raw, o)
			rows = append(rows, activityRow{quiretest.Str(t, o, "type"), quiretest.Str(t, o, "userId"), quiretest.Str(t, o, "source")})
		}
		n, ok := m["next"].(string)
		if !ok || n == "" {
			return rows, raw
		}
		next = n
	}
	t.Fatalf("%s: more than 100 pages", path)
	return nil, nil
}

// TestActivity_Trail makes a series of changes to a document by a user,
// an API key and a delegated request, and some refused requests, on both
// sites: the document's trail holds exactly one entry per change, newest
// first, with the right type, user and source, and none for the refused
// ones; each user's trail holds their own entries.
func TestActivity_Trail(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	alice := s.Token("alice", "default", "finance")
	bob := s.Token("bob", "default", "finance")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteID := map[string]string{"": "default"}[site.Query]
			if siteID == "" {
				siteID = strings.TrimPrefix(site.Query, "?siteId=")
			}
			id := servertest.AddDoc(t, s, alice, site.Query, map[string]any{"path": "trail/doc.txt", "content": "one", "contentType": "text/plain"})
			doc := "/documents/" + id
			do := func(tok, method, path string, body any, want int) {
				t.Helper()
				r := s.Do(method, path+servertest.Sep(path)+strings.TrimPrefix(site.Query, "?"), body, tok)
				if r.Status != want {
					t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, want)
				}
			}
			do(alice, "POST", doc+"/tags", map[string]any{"key": "state", "value": "new"}, 201)
			do(alice, "PATCH", doc, map[string]any{"metadata": []any{map[string]any{"key": "m", "value": "1"}}}, 200)
			do(alice, "PATCH", doc, map[string]any{"content": "two", "contentType": "text/plain"}, 200)
			// Refused requests leave nothing.
			do(alice, "PATCH", doc, map[string]any{"path": "\u0000"}, 400)
			do(bob, "PUT", doc+"/checkout", nil, 200)
			do(alice, "PATCH", doc, map[string]any{"content": "three"}, 409)
			do(bob, "DELETE", doc+"/checkout", nil, 200)
			do(alice, "DELETE", doc+"?softDelete=true", nil, 200)
			do(alice, "PUT", doc+"/restore", nil, 200)
			// An API key.
			r := s.Do(http.MethodPost, "/sites/"+siteID+"/apiKeys", map[string]any{"name": "scanner", "permissions": []string{"READ", "WRITE"}}, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			key := quiretest.Str(t, r.JSON(t), "apiKey")
			do(key, "POST", doc+"/tags", map[string]any{"key": "scanned", "value": "yes"}, 201)
			// A delegated request: the admin acts on behalf of clerk.
			r = s.Do(http.MethodPost, "/sites/"+siteID+"/delegationTokens", map[string]any{"permissions": []string{"READ", "WRITE"},
				"onBehalfOf": map[string]any{"username": "clerk"}, "reason": "ticket 42"}, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			del := quiretest.Str(t, r.JSON(t), "delegationToken")
			dr := s.DoHeaders(http.MethodPost, doc+"/tags"+site.Query, map[string]any{"key": "filed", "value": "yes"}, admin,
				map[string]string{"x-formkiq-delegation-token": del})
			servertest.MustStatus(t, dr, http.StatusCreated)

			rows, raw := readTrail(t, s, alice, doc+"/userActivities"+site.Query)
			want := []string{
				"UPDATE/clerk/delegation", "UPDATE/admin/apiKey", // a key acts as who created it
				"RESTORE/alice/user", "SOFT_DELETE/alice/user",
				"UPDATE/bob/user", "UPDATE/bob/user", // check in, check out (the lock attributes)
				"NEW_VERSION/alice/user", "UPDATE/alice/user", "UPDATE/alice/user", "CREATE/alice/user",
			}
			got := make([]string, len(rows))
			for i, r := range rows {
				got[i] = r.String()
			}
			if !slices.Equal(got, want) {
				t.Fatalf("trail\n got %v\nwant %v", got, want)
			}
			// Apart from the rows: what changed, from which request, and who delegated.
			if c := fmt.Sprint(raw[0]["changed"]); c != "[tags]" || raw[0]["actor"] == "" || raw[0]["reason"] != "ticket 42" {
				t.Errorf("delegated entry %v", raw[0])
			}
			if raw[1]["actor"] != "scanner" {
				t.Errorf("API key entry names no key: %v", raw[1])
			}
			if c := fmt.Sprint(raw[6]["changed"]); !strings.Contains(c, "content") {
				t.Errorf("new version entry changed %v", raw[6])
			}
			if c := fmt.Sprint(raw[7]["changed"]); c != "[metadata]" {
				t.Errorf("metadata entry changed %v", raw[7])
			}
			for i, e := range raw {
				if rid, _ := e["requestId"].(string); rid == "" {
					t.Errorf("entry %d has no requestId: %v", i, e)
				}
				if d := quiretest.Obj(t, e["document"]); quiretest.Str(t, d, "documentId") != id {
					t.Errorf("entry %d document %v", i, d)
				}
			}
			// Each user's own trail.
			mine, _ := readTrail(t, s, alice, "/userActivities"+site.Query)
			if len(mine) < 6 || slices.ContainsFunc(mine, func(r activityRow) bool { return r.user != "alice" }) {
				t.Errorf("alice's trail %v", mine)
			}
			bobs, _ := readTrail(t, s, admin, "/userActivities"+servertest.Query(site.Query, "userId=bob"))
			if len(bobs) != 2 {
				t.Errorf("bob's trail read by an admin: %v", bobs)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/userActivities"+servertest.Query(site.Query, "userId=alice"), nil, bob), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/userActivities"+servertest.Query(site.Query, "next=bogus"), nil, bob), http.StatusBadRequest)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/00000000-0000-4000-8000-000000000000/userActivities"+site.Query, nil, bob), http.StatusNotFound)
		})
	}
}

// TestActivity_ArtifactsAndDeletes: an artifact has its own trail; a
// hard delete is the last entry of a document's trail, readable in the
// user's trail after the document is gone.
func TestActivity_ArtifactsAndDeletes(t *testing.T) {
	s := quiretest.NewServer(t)
	alice := s.Token("alice", "default")
	id := servertest.AddDoc(t, s, alice, "", map[string]any{"path": "trail/art.txt", "content": "x"})
	r := s.Do(http.MethodPost, "/documents", map[string]any{"documentId": id, "artifacts": true, "content": "a", "contentType": "text/plain"}, alice)
	servertest.MustStatus(t, r, http.StatusCreated)
	art := quiretest.Str(t, r.JSON(t), "artifactId")
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/tags?artifactId="+art, map[string]any{"key": "k", "value": "v"}, alice), http.StatusCreated)
	rows, raw := readTrail(t, s, alice, "/documents/"+id+"/userActivities?artifactId="+art)
	if len(rows) != 2 || rows[0].typ != "UPDATE" || rows[1].typ != "CREATE" {
		t.Fatalf("artifact trail %v", rows)
	}
	if quiretest.Str(t, raw[0], "artifactId") != art || quiretest.Str(t, raw[0], "documentId") != id {
		t.Errorf("artifact entry %v", raw[0])
	}
	docRows, docRaw := readTrail(t, s, alice, "/documents/"+id+"/userActivities")
	if len(docRaw) > 0 && fmt.Sprint(docRaw[0]["changed"]) != "[artifacts]" {
		t.Errorf("document entry for the new artifact: %v", docRaw[0])
	}
	if len(docRows) != 2 || docRows[0].typ != "UPDATE" || docRows[1].typ != "CREATE" {
		t.Errorf("document trail %v (the artifact's entries are its own; the document's shows it gained one)", docRows)
	}
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id, nil, alice), http.StatusOK)
	mine, raw := readTrail(t, s, alice, "/userActivities")
	if len(mine) == 0 || mine[0].typ != "DELETE" || quiretest.Str(t, raw[0], "documentId") != id {
		t.Errorf("alice's trail after the delete %v", mine)
	}
}
