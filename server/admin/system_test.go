package admin_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestSystemConfiguration(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	user := s.Token("ann", "default")
	// The spec's required webui.ssoLoginRedirectEnabled is always there.
	servertest.MustBody(t, s.Do(http.MethodGet, "/system/configuration", nil, user), `{"webui":{"idleTimeoutSeconds":900,"ssoAutomaticSignIn":false,"ssoLoginRedirectEnabled":false}}`)
	tests := []struct {
		name   string
		tok    string
		body   any
		status int
		want   string
	}{
		{"sso", admin, map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": false, "ssoLoginRedirectEnabled": true}}, 200, `{"message":"Config saved"}`},
		// Automatic sign-in needs an identity provider (oidc_test.go has one).
		{"sso without an identity provider", admin, map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": true}}, 400,
			`{"errors":[{"key":"webui.ssoAutomaticSignIn","error":"needs an identity provider: set auth.oidc_authorization_url, auth.oidc_token_url and auth.oidc_client_id"}]}`},
		{"branding", admin, map[string]any{"branding": map[string]any{"title": "Acme Docs", "primaryColor": "#0a5", "logo": "data:image/png;base64,iVBORw0KGgo="}}, 200, `{"message":"Config saved"}`},
		{"not admin", user, map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": false}}, 401, `{"message":"fkq access denied (Admins group required)"}`},
		{"bad color", admin, map[string]any{"branding": map[string]any{"primaryColor": "green"}}, 400, `{"errors":[{"key":"branding.primaryColor","error":"invalid 'primaryColor', use #RRGGBB"}]}`},
		{"bad logo", admin, map[string]any{"branding": map[string]any{"logo": "javascript:alert(1)"}}, 400, `{"errors":[{"key":"branding.logo","error":"invalid 'logo', use an http(s) URL or a data:image/ URL"}]}`},
		{"idle timeout is a server setting", admin, map[string]any{"webui": map[string]any{"idleTimeoutSeconds": 60}}, 400, `{"errors":[{"key":"webui.idleTimeoutSeconds","error":"set by the server setting auth.console_idle_timeout"}]}`},
		{"wrong type", admin, map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": "yes"}}, 400, `{"errors":[{"key":"webui.ssoAutomaticSignIn","error":"invalid 'webui.ssoAutomaticSignIn' type"}]}`},
		{"redirect wrong type", admin, map[string]any{"webui": map[string]any{"ssoLoginRedirectEnabled": "no"}}, 400, `{"errors":[{"key":"webui.ssoLoginRedirectEnabled","error":"invalid 'webui.ssoLoginRedirectEnabled' type"}]}`},
		{"empty", admin, map[string]any{}, 400, `{"errors":[{"key":"webui","error":"'webui' or 'branding' is required"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPatch, "/system/configuration", tt.body, tt.tok)
			servertest.MustStatus(t, r, tt.status)
			servertest.MustBody(t, r, tt.want)
		})
	}
	// Failed updates changed nothing; each section kept its value.
	servertest.MustBody(t, s.Do(http.MethodGet, "/system/configuration", nil, user),
		`{"branding":{"logoUrl":"/branding/logo?v=TEtqO-ExSrhhOL70MU3eAg","primaryColor":"#0a5","title":"Acme Docs"},"webui":{"idleTimeoutSeconds":900,"ssoAutomaticSignIn":false,"ssoLoginRedirectEnabled":true}}`)
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/system/configuration", map[string]any{"webui": map[string]any{"ssoLoginRedirectEnabled": false}}, admin), http.StatusOK)
	if w := quiretest.Obj(t, s.Do(http.MethodGet, "/system/configuration", nil, user).JSON(t)["webui"]); w["ssoLoginRedirectEnabled"] != false || w["ssoAutomaticSignIn"] != false {
		t.Fatalf("webui after setting ssoLoginRedirectEnabled: %v", w)
	}

	// Site branding is independent of the global one, both ways.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/finance/configuration", map[string]any{"branding": map[string]any{"title": "Finance", "secondaryColor": "#112233"}}, admin), http.StatusOK)
	r := s.Do(http.MethodGet, "/sites/finance/configuration", nil, admin)
	if b := quiretest.Obj(t, r.JSON(t)["branding"]); b["title"] != "Finance" || b["primaryColor"] != nil {
		t.Fatalf("site branding: %v", b)
	}
	if _, ok := s.Do(http.MethodGet, "/sites/default/configuration", nil, admin).JSON(t)["branding"]; ok {
		t.Fatal("another site got branding")
	}
	if !strings.Contains(string(s.Do(http.MethodGet, "/system/configuration", nil, admin).Body), `"title":"Acme Docs"`) {
		t.Fatal("site branding changed the global one")
	}
	servertest.MustBody(t, s.Do(http.MethodPatch, "/sites/finance/configuration", map[string]any{"branding": map[string]any{"supportEmail": "nope"}}, admin),
		`{"errors":[{"key":"branding.supportEmail","error":"invalid 'supportEmail'"}]}`)
}

// TestRetention_SoftDeletedPurged checks document.retentionAndDisposition:
// validation, and soft-deleted documents purged once their site's
// softDeleteRetentionInDays has passed (0: at the next sweep).
func TestRetention_SoftDeletedPurged(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	for _, tt := range []struct {
		name, body, want string
	}{
		{"action", `{"document":{"retentionAndDisposition":{"dispositionAction":"BURN"}}}`, `{"errors":[{"key":"document.retentionAndDisposition.dispositionAction","error":"invalid 'dispositionAction', use SOFT_DELETE or DELETE"}]}`},
		{"days", `{"document":{"retentionAndDisposition":{"softDeleteRetentionInDays":-7}}}`, `{"errors":[{"key":"document.retentionAndDisposition.softDeleteRetentionInDays","error":"'softDeleteRetentionInDays' must be -1 (keep) or more"}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.DoHeaders(http.MethodPatch, "/sites/default/configuration", tt.body, tok, map[string]string{"Content-Type": "application/json"})
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, tt.want)
		})
	}
	gone := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "old"})
	kept := servertest.AddDoc(t, s, tok, "", map[string]any{"content": "live"})
	other := servertest.AddDoc(t, s, tok, "?siteId=finance", map[string]any{"content": "other site"})
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+gone+"?softDelete=true", nil, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+other+"?softDelete=true&siteId=finance", nil, tok), http.StatusOK)
	// A week of retention keeps today's soft delete.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"document": map[string]any{"retentionAndDisposition": map[string]any{"softDeleteRetentionInDays": 7, "dispositionAction": "SOFT_DELETE"}}}, tok), http.StatusOK)
	waitRetentionPass(t, s, tok)
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+gone+"/restore", nil, tok), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+gone+"?softDelete=true", nil, tok), http.StatusOK)
	// Zero days: purged at the sweep the change triggers.
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"document": map[string]any{"retentionAndDisposition": map[string]any{"softDeleteRetentionInDays": 0}}}, tok), http.StatusOK)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(string(s.Do(http.MethodGet, "/documents?softDeleted=true", nil, tok).Body), gone) {
		if time.Now().After(deadline) {
			t.Fatal("the soft-deleted document was not purged")
		}
		time.Sleep(50 * time.Millisecond)
	}
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+gone+"/restore", nil, tok), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+kept, nil, tok), http.StatusOK)
	// The other site has no retention: its soft-deleted document stays.
	waitRetentionPass(t, s, tok)
	servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+other+"/restore?siteId=finance", nil, tok), http.StatusOK)
}

// retentionWitness is a site with a zero-day retention, named to sort
// after the sites the retention tests use: a retention pass handles sites
// in key order, so one that purged a witness document there has handled
// those sites already.
const retentionWitness = "zz-retention-witness"

// waitRetentionPass returns once a retention pass that began after the
// call has handled every site sorted before retentionWitness. A witness
// document soft-deleted now is purged by a pass that lists the witness site
// after this point, but that pass may have begun (and read the other sites)
// before; so it waits for two witnesses in turn: the pass that purges the
// second begins after the one that purged the first has ended.
func waitRetentionPass(t *testing.T, s *quiretest.Server, tok string) {
	t.Helper()
	site := "?siteId=" + retentionWitness
	for i := range 2 {
		id := servertest.AddDoc(t, s, tok, site, map[string]any{"content": "witness"})
		servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?softDelete=true&siteId="+retentionWitness, nil, tok), http.StatusOK)
		// Saving a site's document settings asks for a pass.
		servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+retentionWitness+"/configuration",
			map[string]any{"document": map[string]any{"retentionAndDisposition": map[string]any{"softDeleteRetentionInDays": 0}}}, tok), http.StatusOK)
		for deadline := time.Now().Add(10 * time.Second); ; {
			r := s.Do(http.MethodGet, "/documents?softDeleted=true&siteId="+retentionWitness, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), id) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("witness %d not purged by a retention pass within 10s", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestBackup_Head: HEAD /system/backup answers the headers and nothing
// after them, so the keep-alive connection stays usable for the next
// request (a streamed backup after a HEAD answer broke it).
func TestBackup_Head(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	servertest.AddDoc(t, s, tok, "", map[string]any{"content": "x"})
	for i := range 5 {
		h := s.Do(http.MethodHead, "/system/backup", nil, tok)
		servertest.MustStatus(t, h, http.StatusOK)
		if r := s.Do(http.MethodGet, "/version", nil, tok); r.Status != http.StatusOK {
			t.Fatalf("request %d after HEAD: %d %s", i, r.Status, r.Body)
		}
	}
}

// TestAdminRoutes: every admin-only route answers a caller outside the
// Admins group the same 401, whatever site permissions the caller holds,
// and lets an admin through.
func TestAdminRoutes(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	const denied = `{"message":"fkq access denied (Admins group required)"}`
	routes := []struct {
		method, path string
		body         any
		adminStatus  int
	}{
		{http.MethodGet, "/system/backup", nil, http.StatusOK},
		{http.MethodHead, "/system/backup", nil, http.StatusOK},
		{http.MethodGet, "/system/health", nil, http.StatusOK},
		{http.MethodPatch, "/system/configuration", map[string]any{"webui": map[string]any{"ssoAutomaticSignIn": false}}, http.StatusOK},
	}
	callers := map[string]string{
		"user":     s.Token("ann", "default"),
		"reader":   s.Token("bob", "default_read"),
		"governor": s.Token("gus", "default_govern"),
	}
	for _, rt := range routes {
		for who, tok := range callers {
			t.Run(rt.method+" "+rt.path+" by "+who, func(t *testing.T) {
				r := s.Do(rt.method, rt.path, rt.body, tok)
				servertest.MustStatus(t, r, http.StatusUnauthorized)
				if rt.method != http.MethodHead {
					servertest.MustBody(t, r, denied)
				}
			})
		}
		t.Run(rt.method+" "+rt.path+" by admin", func(t *testing.T) {
			servertest.MustStatus(t, s.Do(rt.method, rt.path, rt.body, admin), rt.adminStatus)
		})
	}
	// GET /system/configuration is not an admin route: every signed-in
	// user may read it.
	servertest.MustStatus(t, s.Do(http.MethodGet, "/system/configuration", nil, callers["reader"]), http.StatusOK)
}

// TestSystemHealth: GET /system/health is the Admins' one summary of the
// disk and write gate, index, pipeline, cluster, certificates and
// version; anyone else gets FormKiQ's admin 401.
func TestSystemHealth(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/secrets", map[string]any{"alias": "notary", "data": servertest.B64(servertest.Pkcs12File(t, "Nora Notary", "pw")), "password": "pw"}, admin), http.StatusCreated)
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/secrets", map[string]any{"alias": "soon",
		"data": servertest.B64(quiretest.NewCertificate(t, "Sam Soon", time.Now().AddDate(0, 0, 10)).PKCS12(t, "pw")), "password": "pw"}, admin), http.StatusCreated)
	for _, who := range []struct{ name, tok string }{
		{"user", s.Token("ann", "default")},
		{"reader", s.Token("bob", "default_read")},
		{"governor", s.Token("gus", "default_govern")},
	} {
		t.Run("refused to "+who.name, func(t *testing.T) {
			r := s.Do(http.MethodGet, "/system/health", nil, who.tok)
			servertest.MustStatus(t, r, http.StatusUnauthorized)
			servertest.MustBody(t, r, `{"message":"fkq access denied (Admins group required)"}`)
		})
	}
	r := s.Do(http.MethodGet, "/system/health", nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	body := r.JSON(t)
	if _, ok := body["version"].(string); !ok {
		t.Errorf("version: %v", body["version"])
	}
	if st := quiretest.Obj(t, body["storage"]); st["writable"] != true || st["freeBytes"] == nil || st["reserveBytes"] == nil {
		t.Errorf("storage: %v", st)
	}
	if ix := quiretest.Obj(t, body["index"]); ix["queued"] == nil || ix["lagSeconds"] == nil {
		t.Errorf("index: %v", ix)
	}
	if p := quiretest.Obj(t, body["pipeline"]); p["queued"] == nil || p["running"] == nil {
		t.Errorf("pipeline: %v", p)
	}
	if c := quiretest.Obj(t, body["cluster"]); c["clustered"] != false {
		t.Errorf("cluster of a single server: %v", c)
	} else if m, _ := c["members"].([]any); len(m) != 1 || quiretest.Obj(t, m[0])["leader"] != true {
		t.Errorf("a single server is its one member and leads: %v", c)
	}
	certs, _ := body["certificates"].([]any)
	if len(certs) != 2 {
		t.Fatalf("certificates: %v", body["certificates"])
	}
	// Soonest expiry first: the one within 30 days is "expiring".
	soon := quiretest.Obj(t, certs[0])
	if soon["alias"] != "soon" || soon["state"] != "expiring" {
		t.Errorf("a certificate expiring in 10 days: %v", soon)
	}
	if d, _ := soon["daysLeft"].(float64); d < 8 || d > 10 {
		t.Errorf("days left of a certificate expiring in 10 days: %v", soon)
	}
	c := quiretest.Obj(t, certs[1])
	if c["siteId"] != "default" || c["alias"] != "notary" || c["kind"] != "site" || c["notAfter"] == "" {
		t.Errorf("certificate: %v", c)
	}
	if d, _ := c["daysLeft"].(float64); d < 1 || c["state"] != "ok" {
		t.Errorf("a fresh certificate: %v", c)
	}
	if body["ready"] != true {
		t.Errorf("ready: %v", body["ready"])
	}
}

// TestSites_Branding: GET /sites shows each site's own branding to every
// member of the site (the console presents a site with it), and none
// for a site without one.
func TestSites_Branding(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"branding": map[string]any{"title": "Acme Files", "primaryColor": "#112233"}}, admin), http.StatusOK)
	reader := s.Token("bob", "default_read", "other_read")
	sites, _ := s.Do(http.MethodGet, "/sites", nil, reader).JSON(t)["sites"].([]any)
	seen := 0
	for _, x := range sites {
		site := quiretest.Obj(t, x)
		switch site["siteId"] {
		case "default":
			seen++
			if b := quiretest.Obj(t, site["branding"]); b["title"] != "Acme Files" || b["primaryColor"] != "#112233" {
				t.Errorf("default's branding: %v", site)
			}
		case "other":
			seen++
			if _, ok := site["branding"]; ok {
				t.Errorf("a site without branding shows one: %v", site)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("sites: %v", sites)
	}
}
