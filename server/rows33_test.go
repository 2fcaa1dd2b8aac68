package server_test

import (
	"net/http"
	"testing"

	"quire/quiretest"
)

// siteTitle is the title GET /sites shows for site ("" if none).
func siteTitle(t *testing.T, s *quiretest.Server, tok, site string) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/sites", nil, tok)
	mustStatus(t, r, http.StatusOK)
	for _, x := range list(t, r.JSON(t), "sites") {
		if m := obj(t, x); m["siteId"] == site {
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
					mustStatus(t, r, tt.status)
					if tt.status == 200 {
						mustBody(t, r, `{"message":"Site '`+site+`' updated"}`)
					}
				})
			}
			if got := siteTitle(t, s, admin, site); got != "Office "+site {
				t.Errorf("title of %s = %q, want %q (refused changes must not land)", site, got, "Office "+site)
			}
		})
	}
	mustStatus(t, s.Do(http.MethodPatch, "/sites/a%01b", map[string]any{"site": map[string]any{"title": "x"}}, admin), 400)
}

// TestVersion_Components: GET /version lists the modules Quire ships
// with their FormKiQ component releases (SERVICE-SPEC.md §9), for a
// caller of either site; without a token it is 401.
func TestVersion_Components(t *testing.T) {
	s := quiretest.NewServer(t)
	want := map[string]string{"core": "1.19.1", "platform": "1.10.1", "fulltext": "1.10.1", "antivirus": "1.7.1",
		"documentGeneration": "1.2.2", "esignature": "1.2.1", "ocr": "1.7.1"}
	for _, tok := range []string{s.Token("ann", "default_read"), s.Token("fin", "finance")} {
		r := s.Do(http.MethodGet, "/version", nil, tok)
		mustStatus(t, r, http.StatusOK)
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
		mods := list(t, b, "modules")
		if len(mods) != len(want) {
			t.Errorf("modules = %v", mods)
		}
		for _, m := range mods {
			if name, _ := m.(string); want[name] == "" {
				t.Errorf("module %v has no component release", m)
			}
		}
		if _, ok := comps["watermark"]; ok {
			t.Errorf("watermark listed, but Quire does not stamp content")
		}
	}
	mustStatus(t, s.Do(http.MethodGet, "/version", nil, ""), http.StatusUnauthorized)
}
