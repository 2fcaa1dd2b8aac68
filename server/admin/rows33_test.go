package admin_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

// siteTitle is the title GET /sites shows for site ("" if none).
func siteTitle(t *testing.T, s *quiretest.Server, tok, site string) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/sites", nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	for _, x := range quiretest.List(t, r.JSON(t), "sites") {
		if m := quiretest.Obj(t, x); m["siteId"] == site {
			v, _ := m["title"].(string)
			return v
		}
	}
	return ""
}

// TestUpdateSite: PATCH /sites/{siteId} (Admins) changes the title of
// either site; INACTIVE, a bad body and non-admins are refused.
func TestUpdateSite(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range []string{"default", "finance"} {
		t.Run(site, func(t *testing.T) {
			for _, tt := range []struct {
				name   string
				body   any
				tok    string
				status int
			}{
				{"title", map[string]any{"site": map[string]any{"title": "Office " + site, "status": "ACTIVE"}}, admin, 200},
				{"inactive", map[string]any{"site": map[string]any{"title": "Gone", "status": "INACTIVE"}}, admin, 400},
				{"bad status", map[string]any{"site": map[string]any{"status": "PAUSED"}}, admin, 400},
				{"no site", map[string]any{}, admin, 400},
				{"title not a string", `{"site":{"title":5}}`, admin, 400},
				{"governor of the site", map[string]any{"site": map[string]any{"title": "Mine"}}, s.Token("gov", site+"_govern"), 401},
				{"member of the site", map[string]any{"site": map[string]any{"title": "Mine"}}, s.Token("mem", site), 401},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(http.MethodPatch, "/sites/"+site, tt.body, tt.tok)
					servertest.MustStatus(t, r, tt.status)
					if tt.status == 200 {
						servertest.MustBody(t, r, `{"message":"Site '`+site+`' updated"}`)
					}
				})
			}
			if got := siteTitle(t, s, admin, site); got != "Office "+site {
				t.Errorf("title of %s = %q, want %q (refused changes must not land)", site, got, "Office "+site)
			}
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/a%01b", map[string]any{"site": map[string]any{"title": "x"}}, admin), 400)
}

// TestVersion_Components: GET /version lists the modules Quire ships
// with their FormKiQ component releases (SERVICE-SPEC.md §9), for a
// caller of either site; without a token it is 401.
func TestVersion_Components(t *testing.T) {
	s := quiretest.NewServer(t)
	want := map[string]string{"core": "1.19.1", "platform": "1.10.1", "fulltext": "1.10.1", "antivirus": "1.7.1",
		"documentGeneration": "1.2.2", "esignature": "1.2.1", "ocr": "1.7.1", "watermark": "3.0.3"}
	for _, tok := range []string{s.Token("ann", "default_read"), s.Token("fin", "finance")} {
		r := s.Do(http.MethodGet, "/version", nil, tok)
		servertest.MustStatus(t, r, http.StatusOK)
		b := r.JSON(t)
		comps, _ := b["components"].(map[string]any)
		if len(comps) != len(want) {
			t.Errorf("components = %v, want %v", comps, want)
		}
		for k, v := range want {
			if comps[k] != v {
				t.Errorf("components[%s] = %v, want %s", k, comps[k], v)
			}
		}
		mods := quiretest.List(t, b, "modules")
		if len(mods) != len(want) {
			t.Errorf("modules = %v", mods)
		}
		for _, m := range mods {
			if name, _ := m.(string); want[name] == "" {
				t.Errorf("module %v has no component release", m)
			}
		}
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/version", nil, ""), http.StatusUnauthorized)
}

// jwtTimes reads iat and exp of a JWT's payload (not verified: the
// server verified it by accepting it).
func jwtTimes(t *testing.T, tok string) (iat, exp int64) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	var c struct{ Iat, Exp int64 }
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("JWT payload %s: %v", b, err)
	}
	return c.Iat, c.Exp
}

// TestTokenLifetimes_Configured: auth.access_token_ttl and
// auth.refresh_token_ttl (SERVICE-SPEC.md §5.10) set the lifetimes of a
// sign-in's tokens, for users of either site, on /login and
// /login/refresh; lifetimes out of bounds keep the server from starting.
func TestTokenLifetimes_Configured(t *testing.T) {
	for _, tt := range []struct {
		name            string
		access, refresh time.Duration
	}{
		{"defaults", 0, 0},
		{"short", 5 * time.Minute, time.Hour},
		{"long", 24 * time.Hour, 90 * 24 * time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := quiretest.NewServer(t, func(c *quiretest.Config) { c.Auth.AccessTTL, c.Auth.RefreshTTL = tt.access, tt.refresh })
			wantAccess, wantRefresh := tt.access, tt.refresh
			if wantAccess == 0 {
				wantAccess, wantRefresh = 15*time.Minute, 30*24*time.Hour
			}
			admin := s.Admin()
			for _, site := range []string{"default", "finance"} {
				user := "ttl-" + site + "@example.com"
				servertest.MustStatus(t, s.Do(http.MethodPost, "/groups", map[string]any{"group": map[string]any{"name": site}}, admin), http.StatusOK)
				servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": user}, "temporaryPassword": "Temp-pass-1"}, admin), http.StatusOK)
				servertest.MustStatus(t, s.Do(http.MethodPost, "/groups/"+site+"/users", map[string]any{"user": map[string]any{"username": user}}, admin), http.StatusOK)
				access, refresh := servertest.FirstSignIn(t, s, user, "Temp-pass-1", "A new password "+site)
				servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+site, nil, access), http.StatusOK)
				before := time.Now()
				r := servertest.Login(s, user, "A new password "+site)
				servertest.MustStatus(t, r, http.StatusOK)
				ar := quiretest.Obj(t, r.JSON(t)["AuthenticationResult"])
				if got, _ := ar["ExpiresIn"].(float64); time.Duration(got)*time.Second != wantAccess {
					t.Errorf("%s: ExpiresIn = %v, want %v", site, ar["ExpiresIn"], wantAccess.Seconds())
				}
				iat, exp := jwtTimes(t, quiretest.Str(t, ar, "AccessToken"))
				if time.Duration(exp-iat)*time.Second != wantAccess {
					t.Errorf("%s: access token lives %ds, want %v", site, exp-iat, wantAccess)
				}
				rt, err := s.Node.DB.LookupRefresh(auth.SecretHash(quiretest.Str(t, ar, "RefreshToken")))
				if err != nil {
					t.Fatalf("%s: the refresh token is not stored: %v", site, err)
				}
				if d := rt.Expires.Sub(before); d < wantRefresh-time.Minute || d > wantRefresh+time.Minute {
					t.Errorf("%s: the refresh token expires in %v, want %v", site, d, wantRefresh)
				}
				rr := s.Do(http.MethodPost, "/login/refresh", map[string]any{"refreshToken": refresh}, "")
				servertest.MustStatus(t, rr, http.StatusOK)
				iat, exp = jwtTimes(t, quiretest.Str(t, quiretest.Obj(t, rr.JSON(t)["AuthenticationResult"]), "AccessToken"))
				if time.Duration(exp-iat)*time.Second != wantAccess {
					t.Errorf("%s: refreshed access token lives %ds, want %v", site, exp-iat, wantAccess)
				}
			}
		})
	}
	for _, tt := range []struct {
		name            string
		access, refresh time.Duration
	}{
		{"access too short", time.Minute, time.Hour},
		{"access too long", 25 * time.Hour, 48 * time.Hour},
		{"refresh too short", 5 * time.Minute, 30 * time.Minute},
		{"refresh too long", 0, 3651 * 24 * time.Hour},
		{"refresh not longer than access", 2 * time.Hour, time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := auth.Open(auth.Config{DataDir: t.TempDir(), AccessTTL: tt.access, RefreshTTL: tt.refresh}, nil)
			if err == nil || !strings.Contains(err.Error(), "lifetime") {
				t.Fatalf("access %v, refresh %v: err = %v, want a lifetime refused", tt.access, tt.refresh, err)
			}
		})
	}
}

// TestOCR_OutputTypeRefused: ocrOutputType CSV (the OCR lines as a CSV
// artifact, issue 48 item 4) is accepted on both OCR routes of either site,
// any other value is refused with 400 and stored nowhere.
func TestOCR_OutputTypeRefused(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			// No default processing: the actions counted are the requests'.
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scan.txt", "content": "x", "actions": []any{}})
			for _, tt := range []struct {
				name, path string
				body       any
				status     int
				want       string
			}{
				{"action CSV", "/actions", map[string]any{"actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"ocrOutputType": "CSV"}}}}, http.StatusOK, ""},
				{"action other", "/actions", map[string]any{"actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"ocrOutputType": "XML"}}}}, http.StatusBadRequest, "invalid 'ocrOutputType' parameter"},
				{"ocr route CSV", "/ocr", map[string]any{"parseTypes": []string{"TABLES"}, "ocrOutputType": "CSV"}, http.StatusOK, ""},
				{"ocr route other", "/ocr", map[string]any{"ocrOutputType": "PDF"}, http.StatusBadRequest, "invalid 'ocrOutputType' parameter"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(http.MethodPost, "/documents/"+id+tt.path+site.Query, tt.body, tok)
					servertest.MustStatus(t, r, tt.status)
					if tt.want != "" {
						servertest.MustBody(t, r, `{"errors":[{"key":"parameters.ocrOutputType","error":"`+tt.want+`"}]}`)
					}
				})
			}
			a := s.Do(http.MethodGet, "/documents/"+id+"/actions"+site.Query, nil, tok)
			servertest.MustStatus(t, a, http.StatusOK)
			if n := len(quiretest.List(t, a.JSON(t), "actions")); n != 2 {
				t.Fatalf("the two CSV requests left %d actions: %s", n, a.Body)
			}
		})
	}
}

// siteDocCount is the number of documents GET /documents lists in a site.
func siteDocCount(t *testing.T, s *quiretest.Server, tok, site string) int {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents"+servertest.Query(site, "limit=100"), nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	return len(quiretest.List(t, r.JSON(t), "documents"))
}

// TestSiteContentTypes_Enforced: a site's document.contentTypes allow and
// deny lists hold on POST /documents (inline content, children), upload
// URLs and the PUT to them, PATCH and artifacts; each site's lists are its
// own; a refusal leaves nothing behind; clearing the lists lifts them.
func TestSiteContentTypes_Enforced(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	setLists := func(t *testing.T, site string, lists map[string]any, want int) {
		t.Helper()
		servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+site+"/configuration", map[string]any{"document": map[string]any{"contentTypes": lists}}, tok), want)
	}
	// A governor of finance may not set default's lists.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"document": map[string]any{"contentTypes": map[string]any{"denylist": []string{"application/pdf"}}}}, s.Token("g", "finance_govern")), http.StatusUnauthorized)
	setLists(t, "default", map[string]any{"allowlist": []string{"application/pdf", "image/*"}}, http.StatusOK)
	setLists(t, "finance", map[string]any{"denylist": []string{"application/x-sh"}}, http.StatusOK)
	for _, tt := range []struct{ name, lists string }{{"bad entry", `{"denylist":["application/pdf; q=1"]}`}, {"not a list", `{"allowlist":"application/pdf"}`}} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", `{"document":{"contentTypes":`+tt.lists+`}}`, tok), http.StatusBadRequest)
		})
	}
	notAllowed := func(ct string) string {
		return `{"errors":[{"key":"contentType","error":"content type '` + ct + `' is not allowed on this site"}]}`
	}
	pdf := servertest.B64(quiretest.TextPDF("allowed"))
	for _, tt := range []struct {
		name, site string
		body       map[string]any
		status     int
		want       string
	}{
		{"default: pdf", "default", map[string]any{"path": "a.pdf", "content": pdf, "isBase64": true, "contentType": "application/pdf"}, 201, ""},
		{"default: image wildcard", "default", map[string]any{"path": "a.png", "content": "x", "contentType": "image/png"}, 201, ""},
		{"default: pdf with parameters", "default", map[string]any{"path": "b.pdf", "content": pdf, "isBase64": true, "contentType": "Application/PDF; name=b"}, 201, ""},
		{"default: text refused", "default", map[string]any{"path": "a.txt", "content": "x", "contentType": "text/plain"}, 400, notAllowed("text/plain")},
		{"default: undeclared, detected as octet-stream", "default", map[string]any{"path": "u.bin", "content": "x"}, 400, notAllowed("application/octet-stream")},
		{"default: undeclared pdf is detected", "default", map[string]any{"path": "c.pdf", "content": pdf, "isBase64": true}, 201, ""},
		{"default: a refused child refuses all", "default", map[string]any{"path": "p.pdf", "content": pdf, "isBase64": true, "contentType": "application/pdf",
			"documents": []map[string]any{{"path": "child.sh", "content": "x", "contentType": "application/x-sh"}}}, 400, notAllowed("application/x-sh")},
		{"default: upload URL with a refused type", "default", map[string]any{"path": "up.txt", "contentType": "text/plain"}, 400, notAllowed("text/plain")},
		{"finance: denied", "finance", map[string]any{"path": "run.sh", "content": "x", "contentType": "application/x-sh"}, 400, notAllowed("application/x-sh")},
		{"finance: denied with parameters", "finance", map[string]any{"path": "run2.sh", "content": "x", "contentType": "application/x-sh; charset=utf-8"}, 400, notAllowed("application/x-sh; charset=utf-8")},
		{"finance: text is fine", "finance", map[string]any{"path": "a.txt", "content": "x", "contentType": "text/plain"}, 201, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := "/documents"
			if tt.name == "default: upload URL with a refused type" {
				path = "/documents/upload"
			}
			before := siteDocCount(t, s, tok, "?siteId="+tt.site)
			r := s.Do(http.MethodPost, path+"?siteId="+tt.site, tt.body, tok)
			servertest.MustStatus(t, r, tt.status)
			if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
				if n := siteDocCount(t, s, tok, "?siteId="+tt.site); n != before {
					t.Errorf("a refused create left documents: %d before, %d after", before, n)
				}
			}
		})
	}
	// Upload URLs: the type comes with the PUT, checked at the commit.
	t.Run("default: uploads", func(t *testing.T) {
		r := s.Do(http.MethodPost, "/documents/upload", map[string]any{"path": "up/one"}, tok)
		servertest.MustStatus(t, r, http.StatusCreated)
		u, id := quiretest.Str(t, r.JSON(t), "url"), quiretest.Str(t, r.JSON(t), "documentId")
		for _, tt := range []struct {
			ct     string
			status int
		}{{"text/plain", 400}, {"application/octet-stream", 400}, {"", 400}, {"application/pdf", 200}} {
			h := map[string]string{}
			if tt.ct != "" {
				h["Content-Type"] = tt.ct
			}
			pr := s.DoHeaders(http.MethodPut, u, quiretest.TextPDF("up"), "", h)
			if pr.Status != tt.status {
				t.Errorf("PUT with %q: %d %s, want %d", tt.ct, pr.Status, pr.Body, tt.status)
			}
			if tt.status == 400 {
				if d := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t); d["contentLength"] != nil && d["contentLength"] != 0.0 {
					t.Errorf("a refused PUT (%q) committed content: %v", tt.ct, d)
				}
			}
		}
		// PATCH cannot turn it into a refused type, nor add refused content.
		servertest.MustBody(t, s.Do(http.MethodPatch, "/documents/"+id, map[string]any{"contentType": "text/plain"}, tok), notAllowed("text/plain"))
		servertest.MustBody(t, s.Do(http.MethodPatch, "/documents/"+id, map[string]any{"content": "x", "contentType": "text/html"}, tok), notAllowed("text/html"))
		if got := quiretest.Str(t, s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t), "contentType"); got != "application/pdf" {
			t.Errorf("contentType after refused PATCHes = %q", got)
		}
		// Artifacts too.
		servertest.MustBody(t, s.Do(http.MethodPost, "/documents", map[string]any{"artifacts": true, "documentId": id, "content": "x", "contentType": "text/plain"}, tok), notAllowed("text/plain"))
	})
	// Cleared lists allow anything again.
	setLists(t, "default", map[string]any{"allowlist": []string{}}, http.StatusOK)
	servertest.AddDoc(t, s, tok, "", map[string]any{"path": "later.txt", "content": "x", "contentType": "text/plain"})
}

// activitiesPage reads GET /activities and returns the entries' types
// and the raw body.
func activitiesPage(t *testing.T, s *quiretest.Server, tok, query string) []map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/activities?"+query, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	var out []map[string]any
	for _, e := range quiretest.List(t, r.JSON(t), "activities") {
		out = append(out, quiretest.Obj(t, e))
	}
	return out
}

// TestActivities_Resource: FormKiQ's GET /activities answers a document's
// trail (documentId, artifactId) and a user's (userId), as Activity
// entries, on both sites; start and end bound it; filters of resources
// Quire does not record, ASC and a bad date are 400; callers without READ
// on the document's folder, of another site, or reading another user's
// trail without GOVERN are refused.
func TestActivities_Resource(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sq := "siteId=" + site.Name
			ann := s.Token("ann", site.Name)
			id := servertest.AddDoc(t, s, ann, site.Query, map[string]any{"path": "locked/a.txt", "content": "one", "contentType": "text/plain"})
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"content": "two"}, ann), http.StatusOK)
			art := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"artifacts": true, "documentId": id, "content": "a", "contentType": "text/plain"}, ann)
			servertest.MustStatus(t, art, http.StatusCreated)
			artID := quiretest.Str(t, art.JSON(t), "artifactId")

			got := activitiesPage(t, s, ann, sq+"&documentId="+id)
			if len(got) != 3 || got[0]["type"] != "UPDATE" || got[1]["type"] != "NEW_VERSION" || got[2]["type"] != "CREATE" {
				t.Fatalf("document trail = %v, want UPDATE (the artifact), NEW_VERSION, CREATE", got)
			}
			for _, e := range got {
				if e["resource"] != "documents" || e["status"] != "COMPLETE" || e["documentId"] != id || e["userId"] != "ann" {
					t.Errorf("entry %v lacks FormKiQ's Activity fields", e)
				}
			}
			if a := activitiesPage(t, s, ann, sq+"&documentId="+id+"&artifactId="+artID); len(a) != 1 || a[0]["artifactId"] != artID {
				t.Errorf("artifact trail = %v", a)
			}
			if mine := activitiesPage(t, s, ann, sq); len(mine) < 3 {
				t.Errorf("ann's own trail = %v, want her 3 changes", mine)
			}
			if theirs := activitiesPage(t, s, admin, sq+"&userId=ann"); len(theirs) < 3 {
				t.Errorf("ann's trail read by an admin = %v", theirs)
			}
			future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			if none := activitiesPage(t, s, ann, sq+"&documentId="+id+"&start="+future); len(none) != 0 {
				t.Errorf("start in the future kept %v", none)
			}
			if all := activitiesPage(t, s, ann, sq+"&documentId="+id+"&end="+future+"&sort=DESC"); len(all) != 3 {
				t.Errorf("end in the future kept %d entries, want 3", len(all))
			}

			servertest.SetFolderRoles(t, s, admin, site.Query, "locked", map[string][]string{"lockreaders": {"READ"}})
			for _, tt := range []struct {
				name, tok, query string
				status           int
			}{
				{"entity types are not recorded", ann, "&entityTypeId=x", 400},
				{"workflows are not recorded", ann, "&workflowId=x", 400},
				{"ascending", ann, "&sort=ASC", 400},
				{"bad start", ann, "&start=yesterday", 400},
				{"artifact without document", ann, "&artifactId=" + artID, 400},
				{"unknown document", ann, "&documentId=00000000-0000-4000-8000-000000000000", 404},
				{"artifact id as document", ann, "&documentId=" + artID, 404},
				{"no READ on the folder", s.Token("bob", site.Name), "&documentId=" + id, 401},
				{"READ on the folder", s.Token("rita", site.Name, "lockreaders"), "&documentId=" + id, 200},
				{"another site", s.Token("oscar", "other"), "&documentId=" + id, 401},
				{"another user's trail without GOVERN", s.Token("bob", site.Name), "&userId=ann", 401},
				{"another user's trail with GOVERN", s.Token("gov", site.Name+"_govern"), "&userId=ann", 200},
				{"no token", "", "&documentId=" + id, 401},
			} {
				t.Run(tt.name, func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodGet, "/activities?"+sq+tt.query, nil, tt.tok), tt.status)
				})
			}
			// bob's own trail does not show ann's document in the locked folder.
			bob := s.Token("bob", site.Name)
			if e := activitiesPage(t, s, bob, sq); len(e) != 0 {
				t.Errorf("bob's trail = %v", e)
			}
		})
	}
}

// sharePaths are the paths GET /folders lists for tok at query.
func sharePaths(t *testing.T, s *quiretest.Server, tok, query string) []string {
	t.Helper()
	r := s.Do(http.MethodGet, "/folders?"+query, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	var out []string
	for _, x := range quiretest.List(t, r.JSON(t), "documents") {
		p, _ := quiretest.Obj(t, x)["path"].(string)
		out = append(out, p)
	}
	return out
}

// TestShares_FolderShares: on both sites, a governor shares a folder with
// a group (READ) and with one user (READ, WRITE); with shareKey the
// recipients, who hold no role on the site, act inside that folder with
// the share's permissions and nowhere else; a site member the folder
// permissions lock out gets the share's permission without shareKey;
// GET /shares lists each caller's shares; refused callers are refused and
// a deleted share stops working.
func TestShares_FolderShares(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	partner := s.Token("pat", "partners")
	outsider := s.Token("olga", "strangers")
	wendy := s.Token("wendy")
	keys := map[string]string{}
	for _, site := range []string{"default", "finance"} {
		t.Run(site, func(t *testing.T) {
			sq := "?siteId=" + site
			other := map[string]string{"default": "finance", "finance": "default"}[site]
			gov := s.Token("gov-"+site, site+"_govern")
			a := servertest.AddDoc(t, s, admin, sq, map[string]any{"path": "proj/a.txt", "content": "in the share", "contentType": "text/plain"})
			b := servertest.AddDoc(t, s, admin, sq, map[string]any{"path": "other/b.txt", "content": "outside", "contentType": "text/plain"})
			proj := servertest.FolderKeyOf(t, s, admin, sq, "", "proj")
			add := func(tok, body string) *quiretest.Response {
				return s.Do(http.MethodPost, "/shares/folders/"+proj+sq, body, tok)
			}
			for _, tt := range []struct {
				name, tok, body string
				status          int
			}{
				{"member without GOVERN", s.Token("mem", site), `{"share":{"group":"partners","permissions":["READ"]}}`, 401},
				{"governor of the other site", s.Token("g2", other+"_govern"), `{"share":{"group":"partners","permissions":["READ"]}}`, 401},
				{"the recipient itself", partner, `{"share":{"group":"partners","permissions":["READ"]}}`, 401},
				{"no share", gov, `{}`, 400},
				{"no permissions", gov, `{"share":{"group":"partners"}}`, 400},
				{"bad permission", gov, `{"share":{"group":"partners","permissions":["GOVERN"]}}`, 400},
				{"group and user", gov, `{"share":{"group":"partners","username":"wendy","permissions":["READ"]}}`, 400},
				{"neither group nor user", gov, `{"share":{"permissions":["READ"]}}`, 400},
			} {
				t.Run(tt.name, func(t *testing.T) { servertest.MustStatus(t, add(tt.tok, tt.body), tt.status) })
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/shares/folders/bm9zdWNo"+sq, `{"share":{"group":"partners","permissions":["READ"]}}`, gov), http.StatusNotFound)
			r := add(gov, `{"share":{"group":"partners","permissions":["READ"]}}`)
			servertest.MustStatus(t, r, http.StatusCreated)
			k := quiretest.Str(t, r.JSON(t), "shareKey")
			keys[site] = k
			r = add(gov, `{"share":{"username":"wendy","permissions":["READ","WRITE"]}}`)
			servertest.MustStatus(t, r, http.StatusCreated)
			kw := quiretest.Str(t, r.JSON(t), "shareKey")
			sk := "?shareKey=" + k

			for _, tt := range []struct {
				name, method, path, tok string
				body                    any
				status                  int
			}{
				{"read inside the share", "GET", "/documents/" + a + sk, partner, nil, 200},
				{"content inside the share", "GET", "/documents/" + a + "/content" + sk, partner, nil, 200},
				{"tags inside the share", "GET", "/documents/" + a + "/tags" + sk, partner, nil, 200},
				{"outside the shared folder", "GET", "/documents/" + b + sk, partner, nil, 401},
				{"without shareKey: no site role", "GET", "/documents/" + a + sq, partner, nil, 401},
				{"write with a READ share", "POST", "/documents" + sk, partner, map[string]any{"path": "proj/new.txt", "content": "x"}, 401},
				{"a route without shareKey", "GET", "/documents/" + a + "/attributes" + sk, partner, nil, 400},
				{"a site route", "GET", "/sites/" + site + "/locales" + sk, partner, nil, 400},
				{"the other site named", "GET", "/documents/" + a + sk + "&siteId=" + other, partner, nil, 400},
				{"not a recipient", "GET", "/documents/" + a + sk, outsider, nil, 401},
				{"unknown share", "GET", "/documents/" + a + "?shareKey=00000000-0000-4000-8000-000000000000", partner, nil, 401},
				{"user share: write inside", "POST", "/documents?shareKey=" + kw, wendy, map[string]any{"path": "proj/w.txt", "content": "by wendy"}, 201},
				{"user share: write outside", "POST", "/documents?shareKey=" + kw, wendy, map[string]any{"path": "other/w.txt", "content": "x"}, 401},
				{"user share: move out of the folder", "PATCH", "/documents/" + a + "?shareKey=" + kw, wendy, map[string]any{"path": "other/moved.txt"}, 401},
				{"user share: an artifact of a document outside", "POST", "/documents?shareKey=" + kw, wendy, map[string]any{"artifacts": true, "documentId": b, "content": "x", "contentType": "text/plain"}, 401},
				{"user share: upload URL outside", "GET", "/documents/upload?path=other/u.txt&shareKey=" + kw, wendy, nil, 401},
				{"user share: folder outside", "POST", "/folders?shareKey=" + kw, wendy, map[string]any{"path": "other/sub"}, 401},
				{"user share: folder inside", "POST", "/folders?shareKey=" + kw, wendy, map[string]any{"path": "proj/sub"}, 201},
				{"user share: not for the group", "GET", "/documents/" + a + "?shareKey=" + kw, partner, nil, 401},
				{"user share: delete is not given", "DELETE", "/documents/" + a + "/tags/t/v?shareKey=" + kw, wendy, nil, 401},
			} {
				t.Run(tt.name, func(t *testing.T) {
					servertest.MustStatus(t, s.Do(tt.method, tt.path, tt.body, tt.tok), tt.status)
				})
			}
			if p := servertest.DocPath(t, s, admin, sq, a); p != "proj/a.txt" {
				t.Errorf("shared document moved: %q", p)
			}
			if got := strings.Join(sharePaths(t, s, partner, "shareKey="+k+"&path=proj"), " "); !strings.Contains(got, "a.txt") {
				t.Errorf("the shared folder through the share lists %q", got)
			}
			for _, p := range sharePaths(t, s, partner, "shareKey="+k) {
				if p == "other" {
					t.Errorf("the site root through the share shows %q", p)
				}
			}
			// Wendy's document landed in the share's site, in its folder.
			r = s.Do(http.MethodGet, "/documents"+sq+"&limit=100", nil, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), `"proj/w.txt"`) {
				t.Errorf("wendy's document is not in %s: %s", site, r.Body)
			}

			// Without shareKey: a site member locked out of proj by folder
			// permissions gets the share's READ when in the group.
			servertest.SetFolderRoles(t, s, admin, sq, "proj", map[string][]string{"proj_team": {"READ", "WRITE"}})
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+a+sq, nil, s.Token("rita", site)), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+a+sq, nil, s.Token("rita", site, "partners")), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+a+sq, map[string]any{"path": "proj/renamed.txt"}, s.Token("rita", site, "partners")), http.StatusUnauthorized)
		})
	}
	t.Run("listing", func(t *testing.T) {
		r := s.Do(http.MethodGet, "/shares", nil, partner)
		servertest.MustStatus(t, r, http.StatusOK)
		got := quiretest.List(t, r.JSON(t), "shares")
		if len(got) != 2 {
			t.Fatalf("partner's shares = %s, want the two group shares", r.Body)
		}
		for _, x := range got {
			o := quiretest.Obj(t, x)
			if o["group"] != "partners" || o["type"] != "FOLDER" || o["permissionType"] != "GROUP" || o["path"] != "proj" || o["userId"] == "" {
				t.Errorf("share %v", o)
			}
		}
		if w := quiretest.List(t, s.Do(http.MethodGet, "/shares", nil, wendy).JSON(t), "shares"); len(w) != 2 || quiretest.Obj(t, w[0])["permissionType"] != "USER" {
			t.Errorf("wendy's shares = %v", w)
		}
		if o := quiretest.List(t, s.Do(http.MethodGet, "/shares", nil, outsider).JSON(t), "shares"); len(o) != 0 {
			t.Errorf("an outsider sees shares: %v", o)
		}
		if g := quiretest.List(t, s.Do(http.MethodGet, "/shares?group=nobody", nil, admin).JSON(t), "shares"); len(g) != 0 {
			t.Errorf("group filter kept %v", g)
		}
		if all := quiretest.List(t, s.Do(http.MethodGet, "/shares?limit=1", nil, admin).JSON(t), "shares"); len(all) != 1 {
			t.Errorf("limit=1 gave %d", len(all))
		}
	})
	t.Run("delete", func(t *testing.T) {
		k := keys["finance"]
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/shares/"+k, nil, partner), http.StatusUnauthorized)
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/shares/"+k, nil, s.Token("g", "default_govern")), http.StatusUnauthorized)
		r := s.Do(http.MethodDelete, "/shares/"+k, nil, s.Token("g", "finance_govern"))
		servertest.MustStatus(t, r, http.StatusOK)
		servertest.MustBody(t, r, `{"message":"Share '`+k+`' deleted"}`)
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/shares/"+k, nil, admin), http.StatusNotFound)
		servertest.MustStatus(t, s.Do(http.MethodGet, "/folders?shareKey="+k, nil, partner), http.StatusUnauthorized)
		// The default site's share still works.
		servertest.MustStatus(t, s.Do(http.MethodGet, "/folders?shareKey="+keys["default"], nil, partner), http.StatusOK)
	})
}

// TestGenerate_PDFPackage: a PDF source document generates a PDF package
// (SERVICE-SPEC.md §4.5): inserted PDFs and images go before and after
// it, on both sites; data sources, DOCX output and no inserts are 400;
// READ on an inserted document's folder and WRITE on the output's are
// needed.
func TestGenerate_PDFPackage(t *testing.T) {
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			pdfDoc := func(path, text string) string {
				return servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": path, "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(quiretest.TextPDF(text))})
			}
			src := pdfDoc("pkg/contract.pdf", "Main contract body")
			terms := pdfDoc("pkg/terms.pdf", "Terms and conditions")
			cover := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "pkg/cover.jpg", "contentType": "image/jpeg", "isBase64": true, "content": servertest.B64(servertest.JpegOf(t, quiretest.TextImage("COVER")))})
			secret := pdfDoc("vault/secret.pdf", "Secret annex")
			gen := "/documents/" + src + "/generate" + site.Query

			r := s.Do(http.MethodPost, gen, map[string]any{"path": "pkg/package.pdf",
				"insertDocuments": []map[string]any{{"documentId": terms, "position": "APPEND"}, {"documentId": cover, "position": "PREPEND"}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			out := quiretest.Str(t, r.JSON(t), "documentId")
			pdf := servertest.FetchURLContent(t, s, tok, out, site.Query)
			if p := servertest.PdfPages(t, pdf); p != "3" {
				t.Errorf("pages %s, want 3 (cover, contract, terms)", p)
			}
			text := strings.Join(strings.Fields(servertest.PdfText(t, pdf)), " ")
			if i, j := strings.Index(text, "Main contract body"), strings.Index(text, "Terms and conditions"); i < 0 || j < i {
				t.Errorf("package text %q: want the contract, then the terms", text)
			}
			d := s.Do(http.MethodGet, "/documents/"+out+site.Query, nil, tok).JSON(t)
			if d["contentType"] != "application/pdf" || d["path"] != "pkg/package.pdf" {
				t.Errorf("package document %v", d)
			}
			// As an artifact of the source.
			r = s.Do(http.MethodPost, gen, map[string]any{"outputType": "PDF", "saveAsArtifact": true, "insertDocuments": []map[string]any{{"documentId": terms, "position": "PREPEND"}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			if quiretest.Str(t, r.JSON(t), "documentId") != src || quiretest.Str(t, r.JSON(t), "artifactId") == "" {
				t.Errorf("artifact package: %s", r.Body)
			}

			for _, tt := range []struct {
				name string
				body any
				want string
			}{
				{"docx output", map[string]any{"outputType": "DOCX", "insertDocuments": []map[string]any{{"documentId": terms, "position": "APPEND"}}}, "insertDocuments"},
				{"docx output alone", map[string]any{"outputType": "DOCX"}, "use outputType PDF"},
				{"data sources", map[string]any{"datasources": []map[string]any{{"documentId": terms}}, "insertDocuments": []map[string]any{{"documentId": terms, "position": "APPEND"}}}, "has no placeholders"},
				{"nothing to insert", map[string]any{}, "needs 'insertDocuments'"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(http.MethodPost, gen, tt.body, tok)
					if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) {
						t.Errorf("%d %s, want 400 with %q", r.Status, r.Body, tt.want)
					}
				})
			}
			// Folder permissions: a member locked out of vault cannot
			// package its PDF, nor write into it.
			servertest.SetFolderRoles(t, s, tok, site.Query, "vault", map[string][]string{"vault_team": {"READ", "WRITE"}})
			member := s.Token("mia", site.Name)
			servertest.MustStatus(t, s.Do(http.MethodPost, gen, map[string]any{"path": "pkg/leak.pdf", "insertDocuments": []map[string]any{{"documentId": secret, "position": "APPEND"}}}, member), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodPost, gen, map[string]any{"path": "vault/planted.pdf", "insertDocuments": []map[string]any{{"documentId": terms, "position": "APPEND"}}}, member), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodPost, gen, map[string]any{"path": "pkg/ok.pdf", "insertDocuments": []map[string]any{{"documentId": terms, "position": "APPEND"}}}, member), http.StatusCreated)
		})
	}
}

// TestSiteGroups_Permissions: on both sites an administrator gives a
// group permissions; its members then hold exactly them on that site (not
// on the other); governors read the groups; only Admins change them; a
// removed group grants nothing.
func TestSiteGroups_Permissions(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range []string{"default", "finance"} {
		t.Run(site, func(t *testing.T) {
			other := map[string]string{"default": "finance", "finance": "default"}[site]
			group := "partners-" + site
			member := s.Token("pam-"+site, group)
			gov := s.Token("gov", site+"_govern")
			base := "/sites/" + site + "/groups"
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+site, nil, member), http.StatusUnauthorized)
			for _, tt := range []struct {
				name, tok, body string
				status          int
			}{
				{"governor", gov, `{"permissions":["READ"]}`, 401},
				{"governor of the other site", s.Token("g2", other+"_govern"), `{"permissions":["READ"]}`, 401},
				{"bad permission", admin, `{"permissions":["OWNER"]}`, 400},
				{"no permissions", admin, `{"permissions":[]}`, 400},
				{"set", admin, `{"permissions":["READ","WRITE","READ"]}`, 200},
			} {
				t.Run(tt.name, func(t *testing.T) {
					servertest.MustStatus(t, s.Do(http.MethodPut, base+"/"+group+"/permissions", tt.body, tt.tok), tt.status)
				})
			}
			r := s.Do(http.MethodGet, base, nil, gov)
			servertest.MustStatus(t, r, http.StatusOK)
			servertest.MustBody(t, r, `{"groupNames":["`+group+`"]}`)
			r = s.Do(http.MethodGet, base+"/"+group, nil, gov)
			servertest.MustStatus(t, r, http.StatusOK)
			if got := quiretest.List(t, quiretest.Obj(t, r.JSON(t)["group"]), "permissions"); len(got) != 2 {
				t.Errorf("permissions = %v, want READ, WRITE", got)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, base, nil, s.Token("m", site)), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, base+"/nobody", nil, gov), http.StatusNotFound)

			// The member now reads and writes the site, and nothing more.
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+site, nil, member), http.StatusOK)
			id := servertest.AddDoc(t, s, member, "?siteId="+site, map[string]any{"path": "pg.txt", "content": "x"})
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?siteId="+site, nil, member), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/"+site+"/configuration", nil, member), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+other, nil, member), http.StatusUnauthorized)
			sr := s.Do(http.MethodGet, "/sites", nil, member)
			servertest.MustStatus(t, sr, http.StatusOK)
			if !strings.Contains(string(sr.Body), `"siteId":"`+site+`"`) {
				t.Errorf("GET /sites for the member lacks %s: %s", site, sr.Body)
			}

			servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+group, nil, gov), http.StatusUnauthorized)
			servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+group, nil, admin), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+group, nil, admin), http.StatusNotFound)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+site, nil, member), http.StatusUnauthorized)
		})
	}
}
