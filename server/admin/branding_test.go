package admin_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func dataURL(b []byte) string { return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b) }

// TestBranding_LogoFile: a branding's inline logo is its own file
// (issue 47, item 3). The configuration answers name it (logoUrl) instead
// of carrying its bytes; /branding/logo?v=<hash> needs no token, has a
// strong ETag and is immutable; another v is 404, so a cached URL never
// names other bytes; a site's logo answers only with its current hash.
// Sending back the branding as read keeps the logo.
func TestBranding_LogoFile(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	user := s.Token("ann", "default")
	big := bytes.Repeat([]byte{0}, 50<<10) // a 50 KB logo, as on issue 47's walk
	logo := append(append([]byte{}, pngBytes...), big...)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": map[string]any{"title": "Acme", "logo": dataURL(logo)}}, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"branding": map[string]any{"title": "Default", "logo": dataURL(pngBytes)}}, admin), http.StatusOK)

	cfg := s.Do(http.MethodGet, "/system/configuration", nil, user)
	servertest.MustStatus(t, cfg, http.StatusOK)
	if len(cfg.Body) > 1024 {
		t.Fatalf("GET /system/configuration is %d bytes: the logo is still inside", len(cfg.Body))
	}
	url := quiretest.Str(t, quiretest.Obj(t, cfg.JSON(t)["branding"]), "logoUrl")
	sites := s.Do(http.MethodGet, "/sites", nil, user)
	var siteURL string
	for _, x := range quiretest.List(t, sites.JSON(t), "sites") {
		if st := quiretest.Obj(t, x); st["siteId"] == "default" {
			siteURL = quiretest.Str(t, quiretest.Obj(t, st["branding"]), "logoUrl")
		}
	}
	if !strings.HasPrefix(siteURL, "/sites/default/branding/logo?v=") || strings.Contains(string(sites.Body), "base64") {
		t.Fatalf("GET /sites: site logoUrl %q, body %s", siteURL, sites.Body)
	}
	siteCfg := s.Do(http.MethodGet, "/sites/default/configuration", nil, admin)
	if got := quiretest.Str(t, quiretest.Obj(t, siteCfg.JSON(t)["branding"]), "logoUrl"); got != siteURL {
		t.Fatalf("site configuration logoUrl %q, want %q", got, siteURL)
	}

	r := s.Do(http.MethodGet, url, nil, "")
	servertest.MustStatus(t, r, http.StatusOK)
	etag := r.Header.Get("ETag")
	for k, want := range map[string]string{"Content-Type": "image/png", "Cache-Control": "public, max-age=31536000, immutable",
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"} {
		if got := r.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if !bytes.Equal(r.Body, logo) || !strings.HasPrefix(etag, `"`) || strings.HasPrefix(etag, "W/") {
		t.Fatalf("logo: %d bytes (want %d), ETag %q", len(r.Body), len(logo), etag)
	}

	for _, tt := range []struct {
		name, path string
		headers    map[string]string
		want       int
		wantBody   string
	}{
		{"revalidated", url, map[string]string{"If-None-Match": etag}, http.StatusNotModified, ""},
		{"without v", "/branding/logo", nil, http.StatusOK, string(logo)},
		{"another version", "/branding/logo?v=AAAAAAAAAAAAAAAAAAAAAA", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
		{"v too long", "/branding/logo?v=" + strings.Repeat("a", 65), nil, http.StatusBadRequest, `{"errors":[{"key":"v","error":"invalid 'v'"}]}`},
		{"site logo", siteURL, nil, http.StatusOK, string(pngBytes)},
		{"site logo without its hash", "/sites/default/branding/logo", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
		{"site logo, a wrong hash", "/sites/default/branding/logo?v=x", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
		{"a site without a logo", "/sites/finance/branding/logo?v=x", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
		{"a site that does not exist", "/sites/nowhere-" + strings.Repeat("x", 200) + "/branding/logo?v=x", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
		{"a site id that cannot be one", "/sites/%2e%2e/branding/logo?v=x", nil, http.StatusNotFound, `{"message":"Logo not found"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.DoHeaders(http.MethodGet, tt.path, nil, "", tt.headers)
			servertest.MustStatus(t, r, tt.want)
			if string(r.Body) != tt.wantBody {
				t.Fatalf("body %q, want %q", r.Body, tt.wantBody)
			}
		})
	}

	// The console's branding page sends back what it read: the logo stays.
	b := quiretest.Obj(t, cfg.JSON(t)["branding"])
	b["logo"] = b["logoUrl"]
	delete(b, "logoUrl")
	b["title"] = "Acme Records"
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": b}, admin), http.StatusOK)
	if r := s.Do(http.MethodGet, url, nil, ""); r.Status != http.StatusOK || !bytes.Equal(r.Body, logo) {
		t.Fatalf("after saving the branding back: %d, %d bytes", r.Status, len(r.Body))
	}
	// A URL of another logo is not a logo.
	r = s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": map[string]any{"logo": "/branding/logo?v=AAAA"}}, admin)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	servertest.MustBody(t, r, `{"errors":[{"key":"branding.logo","error":"invalid 'logo', use an http(s) URL or a data:image/ URL"}]}`)
}

// TestBranding_ConfigurationCompressed: GET /system/configuration and
// GET /sites are gzip-compressed for a client that accepts it, and plain
// for one that does not (issue 47, item 3).
func TestBranding_ConfigurationCompressed(t *testing.T) {
	s := quiretest.NewServer(t)
	user := s.Token("ann", "default")
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"branding": map[string]any{"title": "Acme"}}, s.Admin()), http.StatusOK)
	for _, path := range []string{"/system/configuration", "/sites"} {
		for _, tt := range []struct {
			accept string
			gzip   bool
		}{{"gzip, deflate, br", true}, {"identity", false}, {"gzip;q=0", false}} {
			t.Run(path+" "+tt.accept, func(t *testing.T) {
				r := s.DoHeaders(http.MethodGet, path, nil, user, map[string]string{"Accept-Encoding": tt.accept})
				servertest.MustStatus(t, r, http.StatusOK)
				if got := r.Header.Get("Content-Encoding") == "gzip"; got != tt.gzip {
					t.Fatalf("Content-Encoding %q, want gzip %v", r.Header.Get("Content-Encoding"), tt.gzip)
				}
				if !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
					t.Errorf("Vary = %q", r.Header.Get("Vary"))
				}
				body := r.Body
				if tt.gzip {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Fatalf("not gzip: %v", err)
					}
					if body, err = io.ReadAll(zr); err != nil {
						t.Fatalf("gunzip: %v", err)
					}
				}
				if !bytes.HasPrefix(body, []byte("{")) {
					t.Fatalf("body %q is not JSON", body)
				}
			})
		}
	}
}
