package server_test

import (
	"net/http"
	"sort"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server"
	"quire/server/internal/servertest"
)

// The permission matrix's cross-site rows (issue 43, finding 2): a
// credential issued by one site never carries rights on another. Site
// default shares its folder "shared" with the group auditors and with
// the user clerk; callers bound to site finance (an API key a finance
// governor minted, delegation tokens of finance) must not reach it
// through any route that takes shareKey (generated from
// server.ShareRoutes, so a new share route gets its rows), must not see
// the shares in GET /shares, and must not gain the folder without
// shareKey. Foreign groups are refused when a key or an intake profile
// is made.

type crossCaller struct {
	name string
	tok  string
	del  string
}

func TestPermissionMatrix_CrossSite(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	const sq = "?siteId=finance"
	finGov := s.Token("gfin", "finance_govern")
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents"+sq, map[string]any{"path": "fin/x.txt", "content": "finance"}, finGov), http.StatusCreated)

	// A key of finance carrying the group auditors, minted before any
	// share names it (so only the check where the grant is used can
	// stop it).
	kr := s.Do(http.MethodPost, "/sites/finance/apiKeys", map[string]any{"name": "mint", "permissions": []string{"READ", "WRITE", "DELETE"}, "groups": []string{"auditors"}}, finGov)
	servertest.MustStatus(t, kr, http.StatusOK)
	finKey := quiretest.Str(t, kr.JSON(t), "apiKey")

	doc := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "shared/ledger.txt", "content": "default-secret", "contentType": "text/plain"})
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+doc, map[string]any{"metadata": []map[string]any{{"key": "m", "value": "v"}}, "tags": []map[string]any{{"key": "t", "value": "v"}}}, admin), http.StatusOK)
	shared := servertest.FolderKeyOf(t, s, admin, "", "", "shared")
	var keys []string
	for _, body := range []string{
		`{"share":{"group":"auditors","permissions":["READ","WRITE","DELETE"]}}`,
		`{"share":{"username":"clerk","permissions":["READ","WRITE","DELETE"]}}`,
	} {
		r := s.Do(http.MethodPost, "/shares/folders/"+shared, body, admin)
		servertest.MustStatus(t, r, http.StatusCreated)
		keys = append(keys, quiretest.Str(t, r.JSON(t), "shareKey"))
	}
	// The shares work for their own recipients (the rows below would
	// pass for a share that never works).
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"?shareKey="+keys[0], nil, s.Token("aud", "auditors")), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"?shareKey="+keys[1], nil, s.Token("clerk")), http.StatusOK)

	// Issue time: foreign groups are refused.
	for _, g := range []string{"Admins", "default", "default_read", "default_govern", "auditors"} {
		r := s.Do(http.MethodPost, "/sites/finance/apiKeys", map[string]any{"name": "bad", "groups": []string{g}}, finGov)
		if r.Status != http.StatusBadRequest {
			t.Errorf("an API key of finance with group %q: %d %s, want 400", g, r.Status, r.Body)
		}
		r = s.Do(http.MethodPost, "/sites/finance/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "bad", "groups": []string{g}}}, finGov)
		if r.Status != http.StatusBadRequest {
			t.Errorf("an intake profile of finance with group %q: %d %s, want 400", g, r.Status, r.Body)
			s.Do(http.MethodDelete, "/sites/finance/intakeProfiles/bad", nil, finGov)
		}
	}
	// A group of finance's own is fine.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/finance/apiKeys", map[string]any{"name": "own", "groups": []string{"fin_clerks"}}, finGov), http.StatusOK)

	del := func(user string) string {
		r := s.Do(http.MethodPost, "/sites/finance/delegationTokens", map[string]any{"permissions": []string{"READ", "WRITE", "DELETE"},
			"onBehalfOf": map[string]any{"username": user}, "reason": "cross-site"}, admin)
		servertest.MustStatus(t, r, http.StatusOK)
		return quiretest.Str(t, r.JSON(t), "delegationToken")
	}
	callers := []crossCaller{
		{name: "finance API key with group auditors", tok: finKey},
		{name: "finance delegation, actor in auditors", tok: s.Token("fw", "finance", "auditors"), del: del("fw")},
		{name: "finance delegation on behalf of clerk", tok: s.Token("fw2", "finance"), del: del("clerk")},
	}
	do := func(c crossCaller, method, path, body string) *quiretest.Response {
		h := map[string]string{}
		if c.del != "" {
			h["x-formkiq-delegation-token"] = c.del
		}
		var b any
		if body != "" {
			b = body
			h["Content-Type"] = "application/json"
		}
		return s.DoHeaders(method, path, b, c.tok, h)
	}
	vs := s.Do(http.MethodGet, "/documents/"+doc+"/versions", nil, admin).JSON(t)
	params := map[string]string{"documentId": doc, "tagKey": "t", "tagValue": "v", "indexKey": shared,
		"versionKey": quiretest.Str(t, quiretest.Item(t, vs, "documents", 1), "versionKey")}
	samples := map[string]string{
		"POST /documents":              `{"path":"shared/planted.txt","content":"x"}`,
		"POST /documents/upload":       `{"path":"shared/planted-upload.txt"}`,
		"POST /folders":                `{"path":"shared/planted"}`,
		"PATCH /documents/:documentId": `{"tags":[{"key":"stolen","value":"x"}]}`,
	}
	routes := server.ShareRoutes()
	names := make([]string, 0, len(routes))
	for k := range routes {
		names = append(names, k)
	}
	sort.Strings(names)
	// Deleting routes last: a failure to refuse one would take fixtures
	// away from the others.
	sort.SliceStable(names, func(i, j int) bool {
		return !strings.HasPrefix(names[i], "DELETE") && strings.HasPrefix(names[j], "DELETE")
	})
	before := s.Do(http.MethodGet, "/documents/"+doc, nil, admin)
	rows := 0
	for _, k := range names {
		method, tmpl, _ := strings.Cut(k, " ")
		path, ok := fill(apiRoute{method, tmpl}, params)
		if !ok {
			t.Errorf("%s: no fixture for a parameter", k)
			continue
		}
		if method == http.MethodGet && tmpl == "/documents/upload" {
			path += "?path=shared/planted-get.txt"
		}
		for _, c := range callers {
			for _, sk := range keys {
				sep := "?"
				if strings.Contains(path, "?") {
					sep = "&"
				}
				r := do(c, method, path+sep+"shareKey="+sk, samples[k])
				rows++
				if r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
					t.Errorf("%s: %s through share %s: %d %.200s, want 401 or 403", c.name, k, sk, r.Status, r.Body)
				}
			}
		}
	}
	for _, c := range callers {
		// Without shareKey: the request stays on the caller's own site.
		if r := do(c, http.MethodGet, "/documents/"+doc+"?siteId=default", ""); r.Status < 400 {
			t.Errorf("%s: the document of default without shareKey: %d", c.name, r.Status)
		}
		r := do(c, http.MethodGet, "/shares", "")
		for _, sk := range keys {
			if strings.Contains(string(r.Body), sk) {
				t.Errorf("%s: GET /shares lists default's share %s: %s", c.name, sk, r.Body)
			}
		}
	}
	after := s.Do(http.MethodGet, "/documents/"+doc, nil, admin)
	if string(before.Body) != string(after.Body) {
		t.Errorf("the shared document changed:\n%s\n%s", before.Body, after.Body)
	}
	if r := s.Do(http.MethodGet, "/documents?siteId=default&path=shared", nil, admin); strings.Contains(string(r.Body), "planted") {
		t.Errorf("a document was planted in the shared folder: %s", r.Body)
	}
	t.Logf("%d cross-site requests", rows)
}
