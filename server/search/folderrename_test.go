package search_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/server/internal/testhooks"
)

// TestFolders_Rename (issue 47): POST /folders/{indexKey}/moves with
// Quire's name renames a folder that holds documents (a move into its own
// parent under the new name, in steps), keeping its folder permissions;
// a name taken by another folder, or not one folder name, is refused
// before anything moves.
func TestFolders_Rename(t *testing.T) {
	testhooks.SetMoveStep(10)
	t.Cleanup(func() { testhooks.SetMoveStep(0) })
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			var want []string
			for i := range 25 { // three steps
				p := fmt.Sprintf("letters/2026/l-%02d.txt", i)
				want = append(want, fmt.Sprintf("letters/Year 2026/l-%02d.txt", i))
				servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": p, "content": p})
			}
			sub := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "letters/2026/drafts/d.txt", "content": "d"})
			servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "letters/2025/x.txt", "content": "x"})
			servertest.MustStatus(t, s.Do(http.MethodPut, "/folders/permissions"+site.Query, map[string]any{"path": "letters/2026",
				"roles": []any{map[string]any{"roleName": "clerks", "permissions": []string{"READ"}}}}, tok), http.StatusOK)
			moves := "/folders/" + ikey("letters/2026") + "/moves"
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "a name with a slash", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": "a/b"}, Want: 400,
					Resp: `{"errors":[{"key":"name","error":"invalid 'name': one folder name, without '/'"}]}`},
				{Name: "an empty name", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": " "}, Want: 400, Resp: ""},
				{Name: "dot dot", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": ".."}, Want: 400, Resp: ""},
				{Name: "a folder of that name exists", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": "2025"}, Want: 409,
					Resp: `{"message":"folder 'letters/2025' already exists"}`},
				{Name: "its own name is no rename", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": "2026"}, Want: 400,
					Resp: `{"errors":[{"key":"target","error":"folder is already in target"}]}`},
				{Name: "rename", Method: "POST", Path: moves, Body: map[string]any{"path": "letters", "name": "Year 2026"}, Want: 201, Resp: `{"message":"folder move request created"}`},
			})
			got := waitMoved(t, s, tok, site.Query, "letters/Year 2026", 26) // 25 documents and the drafts folder
			var docs []string
			for _, g := range got {
				if strings.HasSuffix(g, ".txt") {
					docs = append(docs, g)
				}
			}
			sort.Strings(docs)
			if fmt.Sprint(docs) != fmt.Sprint(want) {
				t.Fatalf("renamed = %v", got)
			}
			d := s.Do(http.MethodGet, "/documents/"+sub+site.Query, nil, tok).JSON(t)
			if p := quiretest.Str(t, d, "path"); p != "letters/Year 2026/drafts/d.txt" {
				t.Fatalf("the subfolder's document is at %s", p)
			}
			waitMoved(t, s, tok, site.Query, "letters", 2) // 2025 and Year 2026; 2026 is gone
			r := s.Do(http.MethodGet, "/folders/"+ikey("letters/Year 2026")+"/permissions"+site.Query, nil, tok)
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "clerks") {
				t.Fatalf("permissions after the rename: %d %s", r.Status, r.Body)
			}
		})
	}
}
