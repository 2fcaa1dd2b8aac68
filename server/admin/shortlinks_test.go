package admin_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// noFollow is a client that reports redirects instead of following them.
var noFollow = &http.Client{Timeout: 30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// resolve GETs a short URL without following it: status and Location.
func resolve(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := noFollow.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Location")
}

func TestShortlinks(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "links/a.txt", "content": "short and sweet"})
			for _, tt := range []struct {
				name, slug, target string
				wantDoc            bool
			}{
				{"external", "ext-" + site.Name, "https://example.com/a?b=1", false},
				{"document, relative", "doc-" + site.Name, "/documents/" + doc, true},
				{"document, absolute", "abs-" + site.Name, s.URL + "/documents/" + doc, true},
			} {
				t.Run(tt.name, func(t *testing.T) {
					r := s.Do(http.MethodPost, "/shortlinks"+site.Query, map[string]any{"targetUrl": tt.target, "slug": tt.slug}, tok)
					servertest.MustStatus(t, r, http.StatusCreated)
					u := quiretest.Str(t, r.JSON(t), "url")
					if u != s.URL+"/s/"+tt.slug {
						t.Fatalf("url = %q", u)
					}
					status, loc := resolve(t, u)
					if status != http.StatusFound {
						t.Fatalf("resolve: status %d", status)
					}
					if !tt.wantDoc {
						if loc != tt.target {
							t.Errorf("Location = %q, want %q", loc, tt.target)
						}
						return
					}
					if !strings.HasPrefix(loc, s.URL+"/downloads/") {
						t.Fatalf("Location = %q, want a download URL", loc)
					}
					if got := string(servertest.FetchBody(t, loc)); got != "short and sweet" {
						t.Errorf("content = %q", got)
					}
				})
			}

			t.Run("format=short", func(t *testing.T) {
				r := s.Do(http.MethodGet, "/documents/"+doc+"/url"+servertest.Query(site.Query, "format=short"), nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				u := quiretest.Str(t, r.JSON(t), "url")
				if !strings.HasPrefix(u, s.URL+"/s/") {
					t.Fatalf("url = %q, want a short URL", u)
				}
				status, loc := resolve(t, u)
				if status != http.StatusFound || string(servertest.FetchBody(t, loc)) != "short and sweet" {
					t.Fatalf("short URL: status %d, Location %q", status, loc)
				}
			})

			t.Run("deleting the document revokes its links", func(t *testing.T) {
				servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+doc+servertest.Query(site.Query, "softDelete=true"), nil, tok), http.StatusOK)
				status, _ := resolve(t, s.URL+"/s/doc-"+site.Name)
				if status != http.StatusNotFound {
					t.Errorf("link to a soft-deleted document: status %d", status)
				}
				if status, _ := resolve(t, s.URL+"/s/ext-"+site.Name); status != http.StatusFound {
					t.Errorf("an external link was revoked too: %d", status)
				}
				servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+doc+"/restore"+site.Query, nil, tok), http.StatusOK)
				if status, _ := resolve(t, s.URL+"/s/doc-"+site.Name); status != http.StatusFound {
					t.Errorf("link after restore: status %d", status)
				}
			})

			t.Run("delete the link", func(t *testing.T) {
				r := s.Do(http.MethodDelete, "/shortlinks/abs-"+site.Name+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				servertest.MustBody(t, r, `{"message":"Shortlink 'abs-`+site.Name+`' deleted"}`)
				if status, _ := resolve(t, s.URL+"/s/abs-"+site.Name); status != http.StatusNotFound {
					t.Errorf("deleted link: status %d", status)
				}
			})
		})
	}

	t.Run("slugs are unique per server", func(t *testing.T) {
		r := s.Do(http.MethodPost, "/shortlinks?siteId=finance", map[string]any{"targetUrl": "https://example.org/", "slug": "ext-default"}, tok)
		servertest.MustStatus(t, r, http.StatusConflict)
		if status, loc := resolve(t, s.URL+"/s/ext-default"); status != http.StatusFound || loc != "https://example.com/a?b=1" {
			t.Errorf("the first link changed: %d %q", status, loc)
		}
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/shortlinks/ext-default?siteId=finance", nil, tok), http.StatusNotFound)
	})

	t.Run("unknown slugs say nothing", func(t *testing.T) {
		for _, slug := range []string{"nope", "ext-defaul", "EXT-DEFAULT", "abs-default", "%2e%2e", strings.Repeat("a", 65)} {
			r := s.Do(http.MethodGet, "/s/"+slug, nil, "")
			servertest.MustStatus(t, r, http.StatusNotFound)
			servertest.MustBody(t, r, `{"message":"Not found"}`)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		doc := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "b.txt", "content": "b"})
		for _, tt := range []struct {
			name   string
			body   any
			status int
			want   string
		}{
			{"no target", map[string]any{"slug": "a"}, 400, `{"errors":[{"key":"targetUrl","error":"'targetUrl' is required"}]}`},
			{"no slug", map[string]any{"targetUrl": "https://example.com"}, 400, `{"errors":[{"key":"slug","error":"'slug' is required"}]}`},
			{"slug with a slash", map[string]any{"targetUrl": "https://example.com", "slug": "a/b"}, 400, ""},
			{"slug too long", map[string]any{"targetUrl": "https://example.com", "slug": strings.Repeat("a", 65)}, 400, ""},
			{"script target", map[string]any{"targetUrl": "javascript:alert(1)", "slug": "js"}, 400, ""},
			{"relative target", map[string]any{"targetUrl": "/etc/passwd", "slug": "rel"}, 400, ""},
			{"unknown document", map[string]any{"targetUrl": "/documents/6f1c1e55-1111-4222-8333-444455556666", "slug": "gone"}, 404, ""},
			{"document of another site", map[string]any{"targetUrl": "/documents/" + doc, "slug": "other"}, 404, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				path := "/shortlinks"
				if tt.name == "document of another site" {
					path += "?siteId=finance"
				}
				r := s.Do(http.MethodPost, path, tt.body, tok)
				servertest.MustStatus(t, r, tt.status)
				if tt.want != "" {
					servertest.MustBody(t, r, tt.want)
				}
			})
		}
		servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"/url?format=long", nil, tok), http.StatusBadRequest)
		for _, slug := range []string{"js", "rel", "gone", "other"} {
			if status, _ := resolve(t, s.URL+"/s/"+slug); status != http.StatusNotFound {
				t.Errorf("refused link %s exists: %d", slug, status)
			}
		}
	})

	t.Run("readers cannot make links", func(t *testing.T) {
		r := s.Do(http.MethodPost, "/shortlinks?siteId=finance", map[string]any{"targetUrl": "https://example.com", "slug": "reader"}, s.Token("r", "finance_read"))
		servertest.MustStatus(t, r, http.StatusUnauthorized)
	})
}
