package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// siteConfigValues are a valid value of every section of a site's
// configuration (storage.SiteConfig's JSON names) and a string GET
// /sites/{siteId}/configuration shows once the PATCH took effect.
var siteConfigValues = map[string]struct {
	value any
	shows string
}{
	"chatGptApiKey":         {"sk-abc123", `"chatGptApiKey":"****`},
	"maxContentLengthBytes": {"1000000", `"maxContentLengthBytes":"1000000"`},
	"maxDocuments":          {"500", `"maxDocuments":"500"`},
	"maxWebhooks":           {"7", `"maxWebhooks":"7"`},
	"notificationEmail":     {"office@example.com", `"notificationEmail":"office@example.com"`},
	"notification":          {map[string]any{"email": "from@example.com"}, `"email":"from@example.com"`},
	"document":              {map[string]any{"retentionAndDisposition": map[string]any{"softDeleteRetentionInDays": 30}}, `"softDeleteRetentionInDays":30`},
	"ocr":                   {map[string]any{"maxTransactions": -1}, `"maxTransactions":-1`},
	"google":                {map[string]any{}, ""},
	"docusign":              {map[string]any{}, ""},
	"llm":                   {map[string]any{"url": "https://203.0.113.7/v1", "apiKey": "k-1"}, `"url":"https://203.0.113.7/v1"`},
	"branding":              {map[string]any{"title": "Kanzlei"}, `"title":"Kanzlei"`},
	"publicDocuments":       {map[string]any{"enabled": true}, `"enabled":true`},
	"processing":            {map[string]any{"languages": []string{"deu", "eng"}, "defaultActions": []string{"OCR", "FULLTEXT"}}, `"languages":["deu","eng"]`},
}

// Every section of the configuration is applied by PATCH
// /sites/{siteId}/configuration (an accepted setting takes effect): the
// table must name each field of storage.SiteConfig, so a new section
// without a handler fails here.
func TestSiteConfig_EverySectionTakesEffect(t *testing.T) {
	var sections []string
	st := reflect.TypeFor[storage.SiteConfig]()
	for i := range st.NumField() {
		if name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			sections = append(sections, name)
		}
	}
	var listed []string
	for k := range siteConfigValues {
		listed = append(listed, k)
	}
	slices.Sort(sections)
	slices.Sort(listed)
	if !slices.Equal(sections, listed) {
		t.Fatalf("storage.SiteConfig's sections %v, this test's %v: give every section a value", sections, listed)
	}
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, k := range sections {
		t.Run(k, func(t *testing.T) {
			v := siteConfigValues[k]
			r := s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{k: v.value}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			got := s.Do(http.MethodGet, "/sites/default/configuration", nil, tok)
			if !strings.Contains(string(got.Body), v.shows) {
				t.Fatalf("after PATCH %s: GET shows %s, want %s", k, got.Body, v.shows)
			}
		})
	}
}

// The processing section is validated against what the server has, and a
// key that is no section is refused, never stored and ignored.
func TestSiteConfig_ProcessingAndUnknownSections(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, tt := range []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"a misspelt section", map[string]any{"procesing": map[string]any{"languages": []string{"deu"}}}, 400, `{"errors":[{"key":"procesing","error":"unknown setting 'procesing'"}]}`},
		{"a language tesseract lacks", map[string]any{"processing": map[string]any{"languages": []string{"xyz"}}}, 400, ""},
		{"not a language code", map[string]any{"processing": map[string]any{"languages": []string{"German"}}}, 400, ""},
		{"an action that needs parameters", map[string]any{"processing": map[string]any{"defaultActions": []string{"WEBHOOK"}}}, 400, ""},
		{"German and English", map[string]any{"processing": map[string]any{"languages": []string{"deu", "eng"}}}, 200, ""},
		{"no default actions", map[string]any{"processing": map[string]any{"languages": []string{"deu"}, "defaultActions": []string{}}}, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPatch, "/sites/default/configuration", tt.body, tok)
			servertest.MustStatus(t, r, tt.status)
			if tt.want != "" {
				servertest.MustBody(t, r, tt.want)
			}
			if tt.status == 400 && !strings.Contains(string(r.Body), `"key":"proces`) {
				t.Fatalf("refusal %s names no processing key", r.Body)
			}
		})
	}
	var cfg struct {
		Processing *storage.ProcessingConfig `json:"processing"`
	}
	r := s.Do(http.MethodGet, "/sites/default/configuration", nil, tok)
	if err := json.Unmarshal(r.Body, &cfg); err != nil || cfg.Processing == nil {
		t.Fatalf("configuration %s: %v", r.Body, err)
	}
	if !slices.Equal(cfg.Processing.Languages, []string{"deu"}) || cfg.Processing.DefaultActions == nil || len(*cfg.Processing.DefaultActions) != 0 {
		t.Fatalf("processing after the last PATCH: %+v, want languages [deu] and no default actions", cfg.Processing)
	}
	if strings.Contains(string(r.Body), "procesing") {
		t.Fatalf("the refused section was stored: %s", r.Body)
	}
}

// Every member sees the languages the site's scans are read in on GET
// /sites (processing.languages; when unset the default ones tesseract
// has, English, German and French with make deps), as "recognize text" will
// use them; the rest of the configuration stays with its governors.
func TestSites_MembersSeeTheOCRLanguages(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	reader := s.Token("rita", "default_read")
	languages := func() []any {
		t.Helper()
		r := s.Do(http.MethodGet, "/sites", nil, reader)
		servertest.MustStatus(t, r, http.StatusOK)
		for _, x := range quiretest.List(t, r.JSON(t), "sites") {
			if m := quiretest.Obj(t, x); m["siteId"] == "default" {
				return quiretest.List(t, quiretest.Obj(t, m["processing"]), "languages")
			}
		}
		t.Fatalf("GET /sites for a reader lacks the default site: %s", r.Body)
		return nil
	}
	for _, tt := range []struct {
		name    string
		setting any
		want    string
	}{
		{"unset", nil, "[eng deu fra]"},
		{"German first", []string{"deu", "eng"}, "[deu eng]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			servertest.SetSiteConfig(t, s, admin, "", map[string]any{"processing": map[string]any{"languages": tt.setting}})
			if got := fmt.Sprint(languages()); got != tt.want {
				t.Errorf("languages %s, want %s", got, tt.want)
			}
		})
	}
	if r := s.Do(http.MethodGet, "/sites/default/configuration", nil, reader); r.Status != http.StatusUnauthorized && r.Status != http.StatusForbidden {
		t.Errorf("a reader reads the configuration: %d %s", r.Status, r.Body)
	}
}
