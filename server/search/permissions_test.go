package search_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestPermissions_ActionsActAsTheirAdder: MOVE and DELETE actions do no
// more than whoever added them could do by hand, checked when they are
// added and again when they run.
func TestPermissions_ActionsActAsTheirAdder(t *testing.T) {
	s := servertest.PipelineServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			bob := s.Token("bob", site.Name, "hr_team")
			r := s.Do(http.MethodPost, "/sites/"+site.Name+"/apiKeys", map[string]any{"name": "scanner", "permissions": []string{"READ", "WRITE"}}, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			key := quiretest.Str(t, r.JSON(t), "apiKey")

			// No default processing: the statuses below are of the
			// actions this test adds.
			report := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/report.txt", "content": "q3", "actions": []any{}})
			menu := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "public/menu.txt", "content": "menu", "actions": []any{}})
			servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "secret/plans.txt", "content": "x"})
			servertest.MustStatus(t, s.Do(http.MethodPost, "/folders"+site.Query, map[string]any{"path": "hr/archive"}, admin), http.StatusCreated)
			servertest.SetFolderRoles(t, s, admin, site.Query, "hr", map[string][]string{"hr_team": {"READ", "WRITE"}})
			servertest.SetFolderRoles(t, s, admin, site.Query, "hr/archive", map[string][]string{"hr_team": {"READ", "WRITE"}})
			servertest.SetFolderRoles(t, s, admin, site.Query, "secret", map[string][]string{"hr_team": {"READ"}})

			act := func(typ string, params map[string]any) map[string]any {
				return map[string]any{"actions": []map[string]any{{"type": typ, "parameters": params}}}
			}
			purge := act("DELETE", map[string]any{"deleteType": "PURGE"})
			toSecret := act("MOVE", map[string]any{"path": "secret/"})
			cases := []struct {
				name, tok, method, path string
				body                    any
				want                    int
				msg                     string
			}{
				{"no DELETE in the folder", bob, "POST", "/documents/" + report + "/actions", purge, 401, "fkq access denied to folder (hr) (DELETE)"},
				{"no DELETE on the site", key, "POST", "/documents/" + menu + "/actions", act("DELETE", map[string]any{"deleteType": "SOFT_DELETE"}), 401, "fkq access denied (groups: " + site.Name + " (READ,WRITE))"},
				{"no WRITE where it moves to", bob, "POST", "/documents/" + menu + "/actions", toSecret, 401, "fkq access denied to folder (secret) (WRITE)"},
				{"not on PATCH either", bob, "PATCH", "/documents/" + menu, toSecret, 401, "fkq access denied to folder (secret) (WRITE)"},
				{"not on create either", bob, "POST", "/documents", map[string]any{"path": "hr/new.txt", "content": "x", "actions": purge["actions"]}, 401, "fkq access denied to folder (hr) (DELETE)"},
			}
			for _, c := range cases {
				r := s.Do(c.method, c.path+site.Query, c.body, c.tok)
				if r.Status != c.want || !strings.Contains(string(r.Body), c.msg) {
					t.Fatalf("%s: %d %s, want %d %q", c.name, r.Status, r.Body, c.want, c.msg)
				}
			}
			if got := servertest.DocPath(t, s, admin, site.Query, report); got != "hr/report.txt" {
				t.Fatalf("report at %q", got)
			}
			if got := servertest.DocPath(t, s, admin, site.Query, menu); got != "public/menu.txt" {
				t.Fatalf("menu at %q", got)
			}

			// Allowed when added; the folder closes before it runs: it
			// fails and the document stays.
			qr := s.Do(http.MethodPost, "/queues"+site.Query, map[string]any{"name": "Hold"}, admin)
			servertest.MustStatus(t, qr, http.StatusCreated)
			qid := quiretest.Str(t, qr.JSON(t), "queueId")
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+report+"/actions"+site.Query, map[string]any{"actions": []map[string]any{
				{"type": "QUEUE", "queueId": qid}, {"type": "MOVE", "parameters": map[string]any{"path": "hr/archive/"}},
			}}, bob), http.StatusOK)
			servertest.WaitFor(t, "IN_QUEUE", func() bool {
				return servertest.EqualStrings(servertest.WaitActionsOnce(t, s, admin, site.Query, report), []string{"IN_QUEUE", "PENDING"})
			})
			servertest.SetFolderRoles(t, s, admin, site.Query, "hr/archive", map[string][]string{"hr_team": {"READ"}})
			servertest.MustStatus(t, s.Do(http.MethodPost, "/queues/"+qid+"/documents/"+report+"/decisions"+site.Query, map[string]any{"decision": "APPROVE"}, admin), http.StatusOK)
			if st := servertest.WaitActions(t, s, admin, site.Query, report); !servertest.EqualStrings(st, []string{"ASYNC_COMPLETE", "FAILED"}) {
				t.Fatalf("statuses %v", st)
			}
			a := servertest.Actions(t, s, admin, site.Query, report)
			if msg, _ := a[1]["message"].(string); msg != "fkq access denied to folder (hr/archive) (WRITE)" {
				t.Fatalf("MOVE message %q", msg)
			}
			if _, ok := a[1]["actor"]; ok {
				t.Fatalf("the adder's rights are shown: %v", a[1])
			}
			if got := servertest.DocPath(t, s, admin, site.Query, report); got != "hr/report.txt" {
				t.Fatalf("report moved to %q", got)
			}

			// Whoever may, still can.
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+menu+"/actions"+site.Query, toSecret, admin), http.StatusOK)
			if st := servertest.WaitActions(t, s, admin, site.Query, menu); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("admin's move: %v", st)
			}
			if got := servertest.DocPath(t, s, admin, site.Query, menu); got != "secret/menu.txt" {
				t.Fatalf("menu at %q", got)
			}
		})
	}
}

// TestPermissions_FolderChecksOnEveryDocumentRoute: restore, purge and the
// actions of a document in the trash, its upload URL (WRITE: it replaces
// the content) and tag updates by match all respect folder permissions.
func TestPermissions_FolderChecksOnEveryDocumentRoute(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			alice := s.Token("alice", site.Name, "staff") // READ in hr
			bob := s.Token("bob", site.Name, "hr_team")   // READ, WRITE in hr
			carol := s.Token("carol", site.Name)          // nothing in hr
			tags := []map[string]any{{"key": "dept", "value": "hr"}}
			salary := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/salary.txt", "content": "pay", "tags": tags})
			menu := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "public/menu.txt", "content": "menu", "tags": tags})
			servertest.SetFolderRoles(t, s, admin, site.Query, "hr", map[string][]string{"hr_team": {"READ", "WRITE"}, "staff": {"READ"}})

			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+salary+"/upload"+site.Query, nil, alice), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+salary+"/upload"+site.Query, nil, bob), http.StatusOK)

			// PATCH /documents/tags skips what the caller may not write.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/tags"+site.Query, map[string]any{
				"match":  map[string]any{"tag": map[string]any{"key": "dept", "eq": "hr"}},
				"update": map[string]any{"tags": []map[string]any{{"key": "reviewed", "value": "alice"}}},
			}, alice), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+menu+"/tags/reviewed"+site.Query, nil, admin), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+salary+"/tags/reviewed"+site.Query, nil, admin), http.StatusNotFound)

			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+salary+servertest.Query(site.Query, "softDelete=true"), nil, admin), http.StatusOK)
			steps := []struct {
				name, tok, method, path string
				want                    int
			}{
				{"carol cannot see its actions", carol, "GET", "/actions", 401},
				{"alice sees its actions", alice, "GET", "/actions", 200},
				{"alice cannot restore", alice, "PUT", "/restore", 401},
				{"alice cannot purge", alice, "DELETE", "/purge", 401},
				{"bob cannot purge", bob, "DELETE", "/purge", 401},
				{"bob restores", bob, "PUT", "/restore", 200},
			}
			for _, st := range steps {
				if r := s.Do(st.method, "/documents/"+salary+st.path+site.Query, nil, st.tok); r.Status != st.want {
					t.Fatalf("%s: %d %s, want %d", st.name, r.Status, r.Body, st.want)
				}
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+salary+site.Query, nil, admin), http.StatusOK)
		})
	}
}

// TestPermissions_SearchTotalsCountOnlyVisible: totals of fulltext
// searches leave out documents in folders the caller may not read.
func TestPermissions_SearchTotalsCountOnlyVisible(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			alice := s.Token("alice", site.Name, "staff")
			servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/pay.txt", "contentType": "text/plain", "content": "quarterly bonus plan"})
			servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/more.txt", "contentType": "text/plain", "content": "bonus table"})
			servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "public/menu.txt", "contentType": "text/plain", "content": "bonus dessert"})
			servertest.SetFolderRoles(t, s, admin, site.Query, "hr", map[string][]string{"hr_team": {"READ"}})
			servertest.WaitFor(t, "the text indexed", func() bool {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "bonus"}}, admin)
				return r.Status == http.StatusOK && r.JSON(t)["totalCount"] == float64(3)
			})
			for _, c := range []struct {
				tok  string
				want float64
			}{{admin, 3}, {alice, 1}} {
				r := s.Do(http.MethodPost, "/searchFulltext"+site.Query, map[string]any{"query": map[string]any{"text": "bonus"}}, c.tok)
				servertest.MustStatus(t, r, http.StatusOK)
				m := r.JSON(t)
				if n := m["totalCount"]; n != c.want || len(quiretest.List(t, m, "documents")) != int(c.want) {
					t.Fatalf("searchFulltext: totalCount %v, want %v: %s", n, c.want, r.Body)
				}
				r = s.Do(http.MethodPost, "/queryFulltext"+site.Query, map[string]any{"query": map[string]any{"match": map[string]any{"content": "bonus"}}}, c.tok)
				servertest.MustStatus(t, r, http.StatusOK)
				hits := quiretest.Obj(t, quiretest.Obj(t, r.JSON(t)["result"])["hits"])
				total := quiretest.Obj(t, hits["total"])
				if total["value"] != c.want || total["relation"] != "eq" || len(quiretest.List(t, hits, "hits")) != int(c.want) {
					t.Fatalf("queryFulltext: total %v, want %v: %s", total, c.want, r.Body)
				}
			}
		})
	}
}

// TestPermissions_KeycloakGroupPathSitesStayApart: group paths such as
// "/finance" and "/finance/hr" are distinct sites; neither's keys are a
// prefix of the other's, so listings, searches, the trash, folder deletes
// and upload URLs of one never reach the other.
func TestPermissions_KeycloakGroupPathSitesStayApart(t *testing.T) {
	s := quiretest.NewServer(t)
	fin := s.Token("ann", "/finance")
	hr := s.Token("hank", "/finance/hr")
	ids := map[string]string{}
	for name, tok := range map[string]string{"fin": fin, "hr": hr} {
		ids[name] = servertest.AddDoc(t, s, tok, "", map[string]any{"path": "a/report.txt", "contentType": "text/plain", "content": name + " budget"})
		ids[name+"-trash"] = servertest.AddDoc(t, s, tok, "", map[string]any{"path": "a/old.txt", "content": "x"})
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+ids[name+"-trash"]+"?softDelete=true", nil, tok), http.StatusOK)
	}
	// Site-wide records: attributes, and folder permissions on a folder
	// both sites have.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes", map[string]any{"attribute": map[string]any{"key": "color"}}, hr), http.StatusCreated)
	servertest.MustStatus(t, s.Do(http.MethodPut, "/folders/permissions?siteId=%2Ffinance%2Fhr", map[string]any{"path": "a", "roles": []any{
		map[string]any{"roleName": "/finance/hr", "permissions": []string{"READ"}}}}, s.Admin()), http.StatusOK)
	// ann has a folder named like hank's site below hers.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/folders", map[string]any{"path": "hr"}, fin), http.StatusCreated)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/folders/"+ikey("hr"), nil, fin), http.StatusOK)

	listed := func(tok, query string) []string {
		r := s.Do(http.MethodGet, "/documents"+query, nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		var out []string
		for _, d := range quiretest.List(t, r.JSON(t), "documents") {
			out = append(out, quiretest.Str(t, quiretest.Obj(t, d), "documentId"))
		}
		return out
	}
	for _, c := range []struct{ name, tok, other string }{{"fin", fin, "hr"}, {"hr", hr, "fin"}} {
		if got := listed(c.tok, ""); len(got) != 1 || got[0] != ids[c.name] {
			t.Fatalf("%s lists %v, want [%s]", c.name, got, ids[c.name])
		}
		if got := listed(c.tok, "?softDeleted=true"); len(got) != 1 || got[0] != ids[c.name+"-trash"] {
			t.Fatalf("%s's trash lists %v, want [%s]", c.name, got, ids[c.name+"-trash"])
		}
		if got := fmt.Sprint(listAll(t, s, c.tok, "", "a")); got != "[a/report.txt]" {
			t.Fatalf("%s's folder a = %s", c.name, got)
		}
		servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+ids[c.other], nil, c.tok), http.StatusNotFound)
		servertest.WaitFor(t, "the text indexed", func() bool {
			r := s.Do(http.MethodPost, "/searchFulltext", map[string]any{"query": map[string]any{"text": "budget"}}, c.tok)
			return r.Status == http.StatusOK && r.JSON(t)["totalCount"] == float64(1)
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+ids["fin"], nil, fin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+ids["hr"], nil, hr), http.StatusOK)
	r := s.Do(http.MethodGet, "/attributes", nil, fin)
	servertest.MustStatus(t, r, http.StatusOK)
	if got := string(r.Body); strings.Contains(got, "color") {
		t.Fatalf("ann's attributes: %s", got)
	}
	r = s.Do(http.MethodGet, "/sites", nil, hr)
	servertest.MustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), `"siteId":"/finance/hr"`) {
		t.Fatalf("GET /sites = %s", r.Body)
	}

	// An upload URL of such a site works.
	r = s.Do(http.MethodGet, "/documents/upload?path=b/up.txt", nil, hr)
	servertest.MustStatus(t, r, http.StatusOK)
	up, _ := r.JSON(t)["url"].(string)
	id, _ := r.JSON(t)["documentId"].(string)
	servertest.MustStatus(t, s.Do(http.MethodPut, up, "uploaded", ""), http.StatusOK)
	r = s.Do(http.MethodGet, "/documents/"+id+"/content", nil, hr)
	servertest.MustStatus(t, r, http.StatusOK)
	if !strings.Contains(string(r.Body), "uploaded") {
		t.Fatalf("content = %s", r.Body)
	}

	// A {siteId} path parameter carries such a site escaped.
	servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/%2Ffinance%2Fhr/classifications", nil, hr), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/%2Ffinance%2Fhr/classifications", nil, fin), http.StatusUnauthorized)
	// Site ids with control characters are refused.
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId=a%01b", nil, s.Admin()), http.StatusBadRequest)
}

// TestPermissions_FolderMoveKeepsPermissionsUnderWay stops a move after
// its first step: the documents already moved and those still waiting are
// governed by the source folder's permissions, not by the target's.
func TestPermissions_FolderMoveKeepsPermissionsUnderWay(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	admin := s.Admin()
	for i := range 12 {
		servertest.AddDoc(t, s, admin, "", map[string]any{"path": fmt.Sprintf("in/sub/f%02d.txt", i), "content": "x"})
	}
	servertest.SetFolderRoles(t, s, admin, "", "in", map[string][]string{"hr_team": {"READ"}})
	servertest.SetFolderRoles(t, s, admin, "", "in/sub", map[string][]string{"hr_team": {"READ", "WRITE"}})
	s.Close()
	db := stopMoveAfterFirstStep(t, dir)
	defer db.Close()
	set, err := db.FolderPermissions("default")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir, group, perm string
		want             bool
	}{
		{"in/sub", "hr_team", "WRITE", true}, // not moved yet
		{"in/sub", "staff", "READ", false},
		{"out/in/sub", "hr_team", "WRITE", true}, // moved
		{"out/in/sub", "staff", "READ", false},
		{"out/in", "staff", "READ", false},
		{"out", "staff", "READ", true}, // the target's own (none)
	} {
		if got := set.Allows(c.dir, []string{c.group}, c.perm); got != c.want {
			t.Fatalf("%s may %s in %s: %v, want %v", c.group, c.perm, c.dir, got, c.want)
		}
	}
}
