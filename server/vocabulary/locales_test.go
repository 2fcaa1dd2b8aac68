package vocabulary_test

import (
	"net/http"
	"net/url"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestLocales(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range []string{"default", "finance"} {
		t.Run(site, func(t *testing.T) {
			base := "/sites/" + site
			sq := "?siteId=" + site
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+sq, map[string]any{"attribute": map[string]any{"key": "status"}}, tok), http.StatusCreated)
			servertest.MustStatus(t, s.Do(http.MethodPut, base+"/schema/document", map[string]any{"name": "s", "attributes": map[string]any{
				"optional": []map[string]any{{"attributeKey": "status", "allowedValues": []string{"open", "closed"}}}}}, tok), http.StatusOK)
			item := func(key string) string { return base + "/locales/fr/resourceItems/" + url.PathEscape(key) }
			steps := []struct {
				name, method, path string
				body               any
				status             int
				want               string
			}{
				{"add locale", "POST", base + "/locales", map[string]any{"locale": "fr"}, 201, ""},
				{"again", "POST", base + "/locales", map[string]any{"locale": "fr"}, 409, ""},
				{"bad locale", "POST", base + "/locales", map[string]any{"locale": "not a locale"}, 400, ""},
				{"list", "GET", base + "/locales", nil, 200, `{"locales":[{"locale":"fr"}]}`},
				{"add schema item", "POST", base + "/locales/fr/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "SCHEMA", "attributeKey": "status", "allowedValue": "open", "localizedValue": "Ouvert"}}, 200, `{"itemKey":"schema#status#open"}`},
				{"add interface item", "POST", base + "/locales/fr/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "INTERFACE", "interfaceKey": "menu.home", "localizedValue": "Accueil"}}, 200, `{"itemKey":"menu.home"}`},
				{"item without value", "POST", base + "/locales/fr/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "SCHEMA", "attributeKey": "status", "allowedValue": "x"}}, 400, ""},
				{"unknown type", "POST", base + "/locales/fr/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "LABEL", "localizedValue": "x"}}, 400, ""},
				{"missing locale", "POST", base + "/locales/de/resourceItems", map[string]any{"resourceItem": map[string]any{"itemType": "INTERFACE", "interfaceKey": "k", "localizedValue": "x"}}, 404, `{"message":"locale 'de' not found"}`},
				{"set", "PUT", item("schema#status#open"), map[string]any{"resourceItem": map[string]any{"itemType": "SCHEMA", "attributeKey": "status", "allowedValue": "open", "localizedValue": "Ouverte"}}, 200, ""},
				{"set under another key", "PUT", item("schema#status#closed"), map[string]any{"resourceItem": map[string]any{"itemType": "SCHEMA", "attributeKey": "status", "allowedValue": "open", "localizedValue": "x"}}, 400, ""},
				{"get", "GET", item("schema#status#open"), nil, 200, ""},
				{"localized values", "GET", base + "/schema/document/attributes/status/allowedValues?locale=fr", nil, 200, `{"allowedValues":["closed","open"],"localizedAllowedValues":{"open":"Ouverte"}}`},
				{"without a locale", "GET", base + "/schema/document/attributes/status/allowedValues", nil, 200, `{"allowedValues":["closed","open"]}`},
				{"schema in a locale", "GET", base + "/schema/document?locale=fr", nil, 200, `{"attributes":{"allowAdditionalAttributes":true,"optional":[{"attributeKey":"status","allowedValues":["open","closed"],"localizedAllowedValues":{"open":"Ouverte"}}],"required":[]},"name":"s"}`},
				{"delete item", "DELETE", item("menu.home"), nil, 200, ""},
				{"deleted item", "GET", item("menu.home"), nil, 404, ""},
				{"reader may not add", "POST", base + "/locales", map[string]any{"locale": "de"}, 0, ""},
				{"delete locale", "DELETE", base + "/locales/fr", nil, 200, ""},
				{"items go with it", "GET", item("schema#status#open"), nil, 404, ""},
			}
			for _, st := range steps {
				t.Run(st.name, func(t *testing.T) {
					tk := tok
					want := st.status
					if st.name == "reader may not add" {
						tk, want = s.Token("r", site+"_read"), http.StatusUnauthorized
					}
					r := s.Do(st.method, st.path, st.body, tk)
					servertest.MustStatus(t, r, want)
					if st.want != "" {
						servertest.MustBody(t, r, st.want)
					}
				})
			}
		})
	}
}

func TestAddSite(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, tt := range []struct {
		name   string
		body   any
		tok    string
		status int
	}{
		{"add", map[string]any{"site": map[string]any{"id": "branch", "title": "Branch office", "status": "ACTIVE"}}, tok, 201},
		{"again", map[string]any{"site": map[string]any{"id": "branch"}}, tok, 409},
		{"inactive", map[string]any{"site": map[string]any{"id": "old", "status": "INACTIVE"}}, tok, 400},
		{"no id", map[string]any{"site": map[string]any{"title": "x"}}, tok, 400},
		{"reserved characters", map[string]any{"site": map[string]any{"id": "a\u0001b"}}, tok, 400},
		{"not an admin", map[string]any{"site": map[string]any{"id": "x"}}, s.Token("gov", "default_govern"), 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.MustStatus(t, s.Do(http.MethodPost, "/sites", tt.body, tt.tok), tt.status)
		})
	}
	r := s.Do(http.MethodGet, "/sites", nil, tok)
	found := false
	for _, x := range quiretest.List(t, r.JSON(t), "sites") {
		if m := quiretest.Obj(t, x); quiretest.Str(t, m, "siteId") == "branch" {
			found = quiretest.Str(t, m, "title") == "Branch office"
		}
	}
	if !found {
		t.Errorf("GET /sites lacks the new site with its title: %s", r.Body)
	}
}
