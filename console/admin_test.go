package console_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// chooseLogo picks a small SVG file in the global branding's logo
// input, as the file chooser does.
const chooseLogo = `(() => {
  const dt = new DataTransfer();
  dt.items.add(new File(['<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#c00"/></svg>'], "logo.svg", {type: "image/svg+xml"}));
  const i = document.getElementById("brand-global-logo");
  i.files = dt.files;
  i.dispatchEvent(new Event("change"));
  return true;
})()`

// TestConsole_AdminPages: an administrator creates a user (in a group,
// then resets its password and disables it), creates an API key that is
// shown once, works, and is refused by the API once revoked, changes the
// global and then the site branding and sees the title and header change
// without a reload, creates a site, sets a site limit and reads the
// health page; axe-core finds no serious or critical violation on each
// admin page and every control is reachable by keyboard. A governor sees
// only the site's pages; a reader sees no admin navigation, and a request
// forced from the reader's browser is refused by the API. One server and
// one browser for all of it.
func TestConsole_AdminPages(t *testing.T) {
	t.Parallel()
	src := axeSource(t)
	e := newEnv(t)
	if r := e.s.Do("POST", "/groups", map[string]any{"group": map[string]any{"name": "Admins"}}, e.admin); r.Status != http.StatusOK && r.Status != http.StatusConflict {
		t.Fatalf("Admins group: %d %s", r.Status, r.Body)
	}
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "default_govern"}}, http.StatusOK)
	e.user(t, "ada", "Admins", "temporary-1", true)
	e.user(t, "gus", "default_govern", "temporary-2", true)
	e.user(t, "rita", "default_read", "temporary-3", true)
	// A signing certificate that expires in 10 days: the health page warns.
	e.must(t, "POST", "/sites/default/secrets", map[string]any{"alias": "notary", "password": "pw",
		"data": base64.StdEncoding.EncodeToString(quiretest.NewCertificate(t, "Nora Notary", time.Now().AddDate(0, 0, 10)).PKCS12(t, "pw"))}, http.StatusCreated)
	// Two intake profiles; a scanner's empty file fails one of them.
	e.must(t, "POST", "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "scans", "actions": []any{}}}, http.StatusCreated)
	e.must(t, "POST", "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "quiet", "actions": []any{}}}, http.StatusCreated)
	e.emptyScan(t, "scans")

	var key string
	apiKeyWorks := func(want int) chromedp.Action {
		return check(func() error {
			if key == "" {
				return fmt.Errorf("no API key read from the page")
			}
			r := e.s.Do("GET", "/documents?siteId=default", nil, key)
			if r.Status != want {
				return fmt.Errorf("GET /documents with the new API key: %d %s, want %d", r.Status, r.Body, want)
			}
			return nil
		})
	}
	userIs := func(name string, want func(map[string]any) bool, what string) chromedp.Action {
		return check(func() error {
			r := e.s.Do("GET", "/users/"+name, nil, e.admin)
			var out struct {
				User map[string]any `json:"user"`
			}
			if err := json.Unmarshal(r.Body, &out); err != nil || out.User == nil || !want(out.User) {
				return fmt.Errorf("user %s is not %s: %d %s", name, what, r.Status, r.Body)
			}
			return nil
		})
	}
	loginAnswer := func(name, pw, want string) chromedp.Action {
		return check(func() error {
			r := e.s.Do("POST", "/login", map[string]any{"username": name, "password": pw}, "")
			if !strings.Contains(string(r.Body), want) {
				return fmt.Errorf("POST /login as %s: %d %s, want %q in it", name, r.Status, r.Body, want)
			}
			return nil
		})
	}
	page := func(name, tab, ready string) step {
		return step{name + " page", chromedp.Tasks{click(`nav.tabs a[href="` + tab + `"]`), wait(ready), axeClean(src, name), keyboardReachable(name), shot("admin-" + name)}}
	}

	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("ada", password)...)
	steps = append(steps,
		step{"the admin navigation leads to users", chromedp.Tasks{click(`header nav a[href="#/admin"]`), textOf("#user-list", "rita"),
			axeClean(src, "users"), keyboardReachable("users")}},
		step{"create a user with a temporary password, in a group", chromedp.Tasks{setValue("#new-username", "newbie"), setValue("#new-temp", "temporary-77"),
			setValue("#new-role", "writer"), click("#user-form button[type=submit]"),
			textOf(`tr[data-user="newbie"]`, "default"), js(`document.getElementById("user-list").scrollIntoView()`, nil), shot("admin-users")}},
		step{"the user exists, with a password to change", loginAnswer("newbie", "temporary-77", "NEW_PASSWORD_REQUIRED")},
		step{"reset the password", chromedp.Tasks{click(`tr[data-user="newbie"] button.reset`), setValue(`tr[data-user="newbie"] .reset-form input`, "another-pass-8"),
			click(`tr[data-user="newbie"] .reset-form button[type=submit]`), textOf("#status", "temporary password set")}},
		step{"the new temporary password signs in", loginAnswer("newbie", "another-pass-8", "NEW_PASSWORD_REQUIRED")},
		step{"disable the user", chromedp.Tasks{click(`tr[data-user="newbie"] button.disable`), textOf(`tr[data-user="newbie"]`, "disabled"),
			userIs("newbie", func(u map[string]any) bool { return u["enabled"] == false }, "disabled"), loginAnswer("newbie", "another-pass-8", "User is disabled")}},

		page("api-keys", "#/admin/keys", `document.querySelector("#key-list")`),
		step{"create an API key: shown once", chromedp.Tasks{setValue("#key-name", "scanner"), click("#key-form button[type=submit]"),
			wait(`document.querySelector("#new-key-value") && document.querySelector("#new-key-value").value.length > 20`),
			valueOf("#new-key-value", &key), textOf("#key-list", "scanner"), shot("admin-api-key-once")}},
		step{"the key works", apiKeyWorks(http.StatusOK)},
		step{"the list shows it masked only", chromedp.ActionFunc(func(ctx context.Context) error {
			var text string
			if err := textIn("#key-list", &text).Do(ctx); err != nil {
				return err
			}
			if strings.Contains(text, key) {
				return fmt.Errorf("the key list shows the whole key")
			}
			return nil
		})},
		step{"leaving the page, the key is gone from it", chromedp.Tasks{click(`nav.tabs a[href="#/admin/users"]`), textOf("#user-list", "newbie"),
			click(`nav.tabs a[href="#/admin/keys"]`), textOf("#key-list", "scanner"), absent("#new-key-value")}},
		step{"revoke the key", chromedp.Tasks{click(`tr[data-key="scanner"] button.revoke`), textOf("#key-list", "No API keys")}},
		step{"the API refuses the revoked key", apiKeyWorks(http.StatusUnauthorized)},

		page("branding", "#/admin/branding", `document.querySelector("#brand-site")`),
		step{"change the global branding: the title changes without a reload", chromedp.Tasks{js(`window.__sameDocument = true`, nil),
			setValue("#brand-global-name", "Acme Records"), setValue("#brand-global-primary", "#7a1f3d"),
			js(chooseLogo, nil), wait(`document.querySelector("#brand-global .logo-preview img")`), click("#brand-global button[type=submit]"),
			wait(`document.title === "Acme Records" && document.getElementById("brand-name").textContent === "Acme Records" && window.__sameDocument === true`),
			wait(`document.getElementById("brand-logo").getAttribute("src").startsWith("data:image/svg+xml")`),
			wait(`getComputedStyle(document.querySelector("header.top")).backgroundColor === "rgb(122, 31, 61)"`)}},
		step{"the site's own branding comes first", chromedp.Tasks{setValue("#brand-site-name", "Default Filing"), click("#brand-site button[type=submit]"),
			wait(`document.title === "Default Filing" && document.getElementById("brand-name").textContent === "Default Filing" && window.__sameDocument === true`),
			axeClean(src, "branded header"), js(`scrollTo(0, 0)`, nil), shot("admin-branding")}},

		page("sites", "#/admin/sites", `document.querySelector("#site-list")`),
		step{"create a site", chromedp.Tasks{setValue("#site-id", "finance"), setValue("#site-title", "Finance"), click("#site-form button[type=submit]"),
			textOf("#site-list", "finance")}},

		page("mail", "#/admin/mail", `document.querySelector("#mail-form")`),
		page("schemas", "#/admin/schemas", `document.querySelector("#class-list")`),
		page("configuration", "#/admin/config", `document.querySelector("#config-form")`),
		step{"set a limit", chromedp.Tasks{setValue("#cfg-maxdocs", "500"), click("#config-form button[type=submit]"), textOf("#status", "saved"),
			check(func() error {
				out := e.must(t, "GET", "/sites/default/configuration", nil, http.StatusOK)
				if out["maxDocuments"] != "500" {
					return fmt.Errorf("maxDocuments %v", out["maxDocuments"])
				}
				return nil
			})}},

		page("intake", "#/admin/intake", `document.querySelector("#intake-list")`),
		step{"the intake page lists each profile's recent failures", chromedp.Tasks{textOf(`#intake-list tr[data-profile="scans"]`, "/sites/default/intake/scans"),
			textOf(`#intake-list tr[data-profile="scans"] .state`, "1"), textOf(`#intake-list tr[data-profile="quiet"] .state`, "0"),
			textOf(`section.intake-errors[data-profile="scans"]`, "blank-page.pdf"), textOf(`section.intake-errors[data-profile="scans"]`, "upload (POST)"),
			absent(`section.intake-errors[data-profile="quiet"]`)}},

		page("health", "#/admin/health", `document.querySelector("#health-version") && document.querySelector("#health-version").textContent !== "—"`),
		step{"the health page reports the disk and the cluster", chromedp.Tasks{textOf("#health-storage", "accepted"), textOf("#health", "single server")}},
		step{"a certificate expiring within 30 days is marked", chromedp.Tasks{textOf("#health-certs tr.cert-expiring", "default / notary"),
			textOf("#health-certs tr.cert-expiring .state.bad", "renew soon"), js(`document.getElementById("health-certs").scrollIntoView({block: "end"})`, nil), shot("admin-health")}},

		step{"sign out", click("#signout")},
	)
	// A governor of the site: the site's pages, not the server's.
	steps = append(steps, signIn("gus", password)...)
	steps = append(steps,
		step{"a governor's admin pages are the site's", chromedp.Tasks{click(`header nav a[href="#/admin"]`), wait(`location.hash === "#/admin/keys"`),
			visible(`nav.tabs a[href="#/admin/branding"]`), visible(`nav.tabs a[href="#/admin/intake"]`), absent(`nav.tabs a[href="#/admin/users"]`), absent(`nav.tabs a[href="#/admin/health"]`),
			absent("#brand-global")}},
		step{"a governor reads the site's intake failures", chromedp.Tasks{click(`nav.tabs a[href="#/admin/intake"]`), textOf(`section.intake-errors[data-profile="scans"]`, "blank-page.pdf")}},
		step{"sign out", click("#signout")},
	)
	// A reader: no admin navigation; a forced request is refused.
	steps = append(steps, signIn("rita", password)...)
	steps = append(steps,
		step{"a reader sees no admin navigation", chromedp.Tasks{visible("header nav"), absent(`header nav a[href="#/admin"]`)}},
		step{"a reader opening an admin page gets no controls", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/users"), textOf("#main", "administrators"),
			absent("#user-form"), absent("#user-list")}},
		step{"a request forced from the reader's browser is refused", chromedp.ActionFunc(func(ctx context.Context) error {
			var got string
			if err := js(`import("/console/js/api.js").then(m => m.api("POST", "/users", {body: {user: {username: "mallory"}, temporaryPassword: "temporary-66"}}))
				.then(() => "accepted", (e) => String(e.status))`, &got).Do(ctx); err != nil {
				return err
			}
			if got != "401" {
				return fmt.Errorf("POST /users from the reader's browser: %s, want 401", got)
			}
			if r := e.s.Do("GET", "/users/mallory", nil, e.admin); r.Status != http.StatusNotFound {
				return fmt.Errorf("the forced request created a user: %d", r.Status)
			}
			return nil
		})},
	)
	b.run(steps...)
}

// emptyScan posts an empty file, blank-page.pdf, through the default
// site's intake profile: refused (400), it is the profile's failure.
func (e *env) emptyScan(t *testing.T, profile string) {
	t.Helper()
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	if _, err := mw.CreateFormFile("file", "blank-page.pdf"); err != nil {
		t.Fatal(err)
	}
	mw.Close()
	if r := e.s.DoHeaders("POST", "/sites/default/intake/"+profile, form.Bytes(), e.admin, map[string]string{"Content-Type": mw.FormDataContentType()}); r.Status != http.StatusBadRequest {
		t.Fatalf("intake of an empty file: %d %s, want 400", r.Status, r.Body)
	}
}
