package search_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/server/internal/testhooks"
	"quire/storage"
)

func ikey(p string) string { return base64.RawURLEncoding.EncodeToString([]byte(p)) }

// listAll lists a folder through meta.folder, every page.
func listAll(t *testing.T, s *quiretest.Server, tok, site, folder string) []string {
	t.Helper()
	var out []string
	next := ""
	for range 100 {
		extra := "limit=100"
		if next != "" {
			extra += "&next=" + next
		}
		docs, n := servertest.Search(t, s, tok, site, map[string]any{"query": map[string]any{"meta": map[string]any{"folder": folder}}}, extra)
		out = append(out, field(docs, "path")...)
		if next = n; next == "" {
			return out
		}
	}
	t.Fatal("too many pages")
	return nil
}

func TestFolders_MoveNow(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			a := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/2025/a.txt", "content": "alpha"})
			servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/2025/sub/b.txt", "content": "beta"})
			servertest.MustStatus(t, s.Do(http.MethodPost, "/folders"+site.Query, map[string]any{"path": "inbox/2025/empty"}, tok), http.StatusCreated)
			// The target already holds a document of the same name.
			old := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "archive/2025/a.txt", "content": "older"})
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "no body fields", Method: "POST", Path: "/indices/folder/move", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"source","error":"'source' is required"},{"key":"target","error":"'target' is required"}]}`},
				{Name: "bad index type", Method: "POST", Path: "/indices/tags/move", Body: map[string]any{"source": "inbox/2025", "target": "archive"}, Want: 400, Resp: `{"errors":[{"key":"indexType","error":"invalid 'indexType'"}]}`},
				{Name: "unknown source", Method: "POST", Path: "/indices/folder/move", Body: map[string]any{"source": "nowhere", "target": "archive"}, Want: 404, Resp: `{"message":"folder 'nowhere' not found"}`},
				{Name: "into itself", Method: "POST", Path: "/indices/folder/move", Body: map[string]any{"source": "inbox", "target": "inbox/2025"}, Want: 400, Resp: `{"errors":[{"key":"target","error":"cannot move a folder into itself"}]}`},
				{Name: "already there", Method: "POST", Path: "/indices/folder/move", Body: map[string]any{"source": "inbox/2025", "target": "inbox/"}, Want: 400, Resp: `{"errors":[{"key":"target","error":"folder is already in target"}]}`},
				{Name: "move", Method: "POST", Path: "/indices/folder/move", Body: map[string]any{"source": "inbox/2025/", "target": "archive/"}, Want: 200, Resp: `{"message":"Folder moved"}`},
			})
			got := listAll(t, s, tok, site.Query, "archive/2025")
			want := []string{"empty", "sub", fmt.Sprintf("archive/2025/a (%s).txt", a), "archive/2025/a.txt"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("archive/2025 = %v, want %v", got, want)
			}
			if got := listAll(t, s, tok, site.Query, "archive/2025/sub"); fmt.Sprint(got) != "[archive/2025/sub/b.txt]" {
				t.Fatalf("archive/2025/sub = %v", got)
			}
			if got := listAll(t, s, tok, site.Query, "inbox"); len(got) != 0 {
				t.Fatalf("inbox still holds %v", got)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/folders"+servertest.Query(site.Query, "path=inbox/2025"), nil, tok), http.StatusNotFound)
			// The documents carry their new paths, in reads and searches;
			// the one that was there keeps its own.
			if p := s.Do(http.MethodGet, "/documents/"+a+site.Query, nil, tok).JSON(t)["path"]; p != fmt.Sprintf("archive/2025/a (%s).txt", a) {
				t.Fatalf("moved path = %v", p)
			}
			if p := s.Do(http.MethodGet, "/documents/"+old+site.Query, nil, tok).JSON(t)["path"]; p != "archive/2025/a.txt" {
				t.Fatalf("existing path = %v", p)
			}
			names, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"folder": map[string]any{"beginsWith": "archive/2025/sub"}}}, "")
			if got := fmt.Sprint(field(names, "path")); got != "[archive/2025/sub/b.txt]" {
				t.Fatalf("folder prefix after move = %s", got)
			}
			if n, _ := servertest.Search(t, s, tok, site.Query, map[string]any{"query": map[string]any{"folder": map[string]any{"beginsWith": "inbox"}}}, ""); len(n) != 0 {
				t.Fatalf("old folder still found: %v", field(n, "path"))
			}
		})
	}
}

// waitMoved polls a folder until it holds n entries (bounded).
func waitMoved(t *testing.T, s *quiretest.Server, tok, site, folder string, n int) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if got = listAll(t, s, tok, site, folder); len(got) == n {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s holds %d entries %v, want %d", folder, len(got), got, n)
	return nil
}

func TestFolders_MoveAsync(t *testing.T) {
	testhooks.SetMoveStep(20)
	t.Cleanup(func() { testhooks.SetMoveStep(0) })
	s := quiretest.NewServer(t)
	tok := s.Admin()
	const n = 45 // three steps
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			var want []string
			for i := range n {
				p := fmt.Sprintf("scans/batch-7/page-%03d.txt", i)
				want = append(want, fmt.Sprintf("done/2026/batch-7/page-%03d.txt", i))
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": p, "content": p})
			}
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "no path", Method: "POST", Path: "/folders/" + ikey("scans/batch-7") + "/moves", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"path","error":"'path' is required"}]}`},
				{Name: "bad key", Method: "POST", Path: "/folders/%25%25/moves", Body: map[string]any{"path": "x"}, Want: 404, Resp: `{"message":"invalid indexKey '%%'"}`},
				{Name: "unknown", Method: "POST", Path: "/folders/" + ikey("scans/none") + "/moves", Body: map[string]any{"path": "x"}, Want: 404, Resp: `{"message":"invalid indexKey '` + ikey("scans/none") + `'"}`},
				{Name: "move", Method: "POST", Path: "/folders/" + ikey("scans/batch-7") + "/moves", Body: map[string]any{"path": "done/2026"}, Want: 201, Resp: `{"message":"folder move request created"}`},
			})
			got := waitMoved(t, s, tok, site.Query, "done/2026/batch-7", n)
			sort.Strings(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("moved = %v", got)
			}
			// The job's last step removes the emptied source folder after
			// its documents show in the target.
			waitMoved(t, s, tok, site.Query, "scans", 0)
		})
	}
}

// stopMoveAfterFirstStep opens the stopped server's store and leaves in
// it what a crash after a move's first step leaves: job-1 moving "in" of
// site default into "out", five documents moved.
func stopMoveAfterFirstStep(t *testing.T, dir string) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC()
	for _, c := range []*storage.Command{
		storage.MustCommand(storage.OpStartFolderMove, "default", "admin", at, storage.StartFolderMove{JobID: "job-1", Source: "in", Target: "out"}),
		storage.MustCommand(storage.OpMoveFolder, "default", "admin", at, storage.MoveFolder{JobID: "job-1", Source: "in", Target: "out", Limit: 5}),
	} {
		if _, err := db.Apply(context.Background(), c); err != nil {
			db.Close()
			t.Fatal(err)
		}
	}
	return db
}

// TestFolders_MoveResumesAfterRestart interrupts a move after its first
// step (as a crash would) and expects the restarted server to finish it.
func TestFolders_MoveResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for i := range 12 {
		servertest.AddDoc(t, s, tok, "", map[string]any{"path": fmt.Sprintf("in/f%02d.txt", i), "content": "x"})
	}
	s.Close()
	db := stopMoveAfterFirstStep(t, dir)
	if j, err := db.GetFolderMove("default", "job-1"); err != nil || j.Status != storage.MovePending || j.Moved != 5 {
		t.Fatalf("job after one step = %+v, %v", j, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := quiretest.StartServer(t, dir)
	tok = s2.Admin()
	if got := waitMoved(t, s2, tok, "", "out/in", 12); got[0] != "out/in/f00.txt" || got[11] != "out/in/f11.txt" {
		t.Fatalf("out/in = %v", got)
	}
	if left := listAll(t, s2, tok, "", "in"); len(left) != 0 {
		t.Fatalf("in still holds %v", left)
	}
}

func TestFolders_Permissions(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			alice := s.Token("alice", site.Name, "staff")
			bob := s.Token("bob", site.Name, "hr_team")
			salary := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/salaries/2026.txt", "content": "pay"})
			policy := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "hr/policies/leave.txt", "content": "leave"})
			public := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "public/menu.txt", "content": "menu"})
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "no path", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"roles": []any{}}, Want: 400, Resp: `{"errors":[{"key":"path","error":"'path' is required"}]}`},
				{Name: "no role name", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"path": "hr", "roles": []any{map[string]any{"permissions": []string{"READ"}}}}, Want: 400, Resp: `{"errors":[{"key":"roleName","error":"'roleName' is required"}]}`},
				{Name: "bad permission", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"path": "hr", "roles": []any{map[string]any{"roleName": "x", "permissions": []string{"ADMIN"}}}}, Want: 400, Resp: `{"errors":[{"key":"permissions","error":"invalid permission 'ADMIN'"}]}`},
				{Name: "unknown folder", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"path": "nope", "roles": []any{map[string]any{"roleName": "x", "permissions": []string{"READ"}}}}, Want: 404, Resp: ""},
				{Name: "hr", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"path": "hr", "roles": []any{map[string]any{"roleName": "hr_team", "permissions": []string{"READ", "WRITE"}}}}, Want: 200, Resp: `{"message":"Folder permissions set"}`},
				// A subfolder's own permissions override its parent's.
				{Name: "policies", Method: "PUT", Path: "/folders/permissions", Body: map[string]any{"path": "hr/policies", "roles": []any{
					map[string]any{"roleName": "staff", "permissions": []string{"READ"}},
					map[string]any{"roleName": "hr_team", "permissions": []string{"READ", "WRITE", "DELETE"}},
				}}, Want: 200, Resp: ""},
				{Name: "get", Method: "GET", Path: "/folders/" + ikey("hr") + "/permissions", Body: nil, Want: 200, Resp: `{"roles":[{"roleName":"hr_team","permissions":["READ","WRITE"]}]}`},
				{Name: "get none", Method: "GET", Path: "/folders/" + ikey("hr/salaries") + "/permissions", Body: nil, Want: 200, Resp: `{"roles":[]}`},
			})
			// Only ADMIN or GOVERN set permissions.
			servertest.MustStatus(t, s.Do(http.MethodPut, "/folders/permissions"+site.Query, map[string]any{"path": "hr", "roles": []any{}}, alice), http.StatusUnauthorized)

			cases := []struct {
				name, tok, method, path string
				body                    any
				want                    int
			}{
				{"alice reads public", alice, "GET", "/documents/" + public, nil, 200},
				{"alice cannot read salaries", alice, "GET", "/documents/" + salary, nil, 401},
				{"alice cannot read salary content", alice, "GET", "/documents/" + salary + "/content", nil, 401},
				{"alice reads a policy", alice, "GET", "/documents/" + policy, nil, 200},
				{"alice cannot change a policy", alice, "PATCH", "/documents/" + policy, map[string]any{"contentType": "text/markdown"}, 401},
				{"alice cannot delete a policy", alice, "DELETE", "/documents/" + policy, nil, 401},
				{"alice cannot file into hr", alice, "POST", "/documents", map[string]any{"path": "hr/salaries/mine.txt", "content": "x"}, 401},
				{"alice cannot move a doc into hr", alice, "PATCH", "/documents/" + public, map[string]any{"path": "hr/salaries/menu.txt"}, 401},
				{"bob reads salaries", bob, "GET", "/documents/" + salary, nil, 200},
				{"bob files into hr", bob, "POST", "/documents", map[string]any{"path": "hr/salaries/2027.txt", "content": "x"}, 201},
				{"bob cannot delete in hr", bob, "DELETE", "/documents/" + salary, nil, 401},
				{"bob deletes in policies", bob, "DELETE", "/documents/" + policy, nil, 200},
			}
			for _, c := range cases {
				r := s.Do(c.method, c.path+site.Query, c.body, c.tok)
				if r.Status != c.want {
					t.Fatalf("%s: status %d, want %d: %s", c.name, r.Status, c.want, r.Body)
				}
			}
			// Listings and searches leave out what alice may not read.
			if got := fmt.Sprint(listAll(t, s, alice, site.Query, "")); got != "[public]" {
				t.Fatalf("alice's root = %s", got)
			}
			if got := fmt.Sprint(listAll(t, s, admin, site.Query, "")); got != "[hr public]" {
				t.Fatalf("admin's root = %s", got)
			}
			if got := fmt.Sprint(listAll(t, s, bob, site.Query, "hr")); got != "[policies salaries]" {
				t.Fatalf("bob's hr = %s", got)
			}
			if got := fmt.Sprint(listAll(t, s, alice, site.Query, "hr")); got != "[policies]" {
				t.Fatalf("alice's hr = %s", got)
			}
			byName := map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": "20"}}}
			if d, _ := servertest.Search(t, s, alice, site.Query, byName, ""); len(d) != 0 {
				t.Fatalf("alice finds %v", field(d, "path"))
			}
			if d, _ := servertest.Search(t, s, bob, site.Query, byName, ""); len(d) != 2 {
				t.Fatalf("bob finds %v", field(d, "path"))
			}
			r := s.Do(http.MethodGet, "/documents"+site.Query, nil, alice)
			servertest.MustStatus(t, r, http.StatusOK)
			for _, d := range quiretest.List(t, r.JSON(t), "documents") {
				if p := quiretest.Str(t, quiretest.Obj(t, d), "path"); p != "public/menu.txt" {
					t.Fatalf("alice lists %s", p)
				}
			}
			// Clearing the permissions opens the folder to the site again.
			servertest.MustStatus(t, s.Do(http.MethodPut, "/folders/permissions"+site.Query, map[string]any{"path": "hr", "roles": []any{}}, admin), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+salary+site.Query, nil, alice), http.StatusOK)
		})
	}
}
