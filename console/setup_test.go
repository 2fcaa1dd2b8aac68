package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// inGroup checks through the API that user is a member of group.
func (e *env) inGroup(t *testing.T, user, group string) chromedp.Action {
	return check(func() error {
		out := e.must(t, "GET", "/users/"+user+"/groups", nil, http.StatusOK)
		if !strings.Contains(fmt.Sprint(out["groups"]), "name:"+group+" ") && !strings.Contains(fmt.Sprint(out["groups"]), "name:"+group+"]") {
			return fmt.Errorf("%s's groups: %v, want %s", user, out["groups"], group)
		}
		return nil
	})
}

// TestConsole_Setup: an administrator sets the office up without the
// API: defines attributes (a type from a list, allowed values, a place in
// the site schema), changes and deletes one; gives users access by site
// and role chosen from lists (the groups behind them are made as
// needed); creates, changes, tests and deletes an intake profile; and
// requests a review of a document. Every form passes axe-core, in German
// too and at phone size.
func TestConsole_Setup(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.must(t, "POST", "/sites", map[string]any{"site": map[string]any{"id": "finance"}}, http.StatusCreated)
	e.adminUser(t, "ada")
	e.user(t, "sam", "", "temporary-2", true)
	doc := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "setup/contract.txt", "content": "a contract", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	schema := func(want string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/sites/default/schema/document", nil, http.StatusOK)
			if s := fmt.Sprint(out["attributes"]); !strings.Contains(s, want) {
				return fmt.Errorf("schema attributes %s, want %s in it", s, want)
			}
			return nil
		})
	}
	b := newBrowser(t, "en-US")
	steps := []step{{"open the console", navigate(e.s.URL + "/console/")}}
	steps = append(steps, signIn("ada", password)...)
	steps = append(steps,
		step{"the attributes page", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/attributes"), textOf("#attr-list", "No attributes defined yet"),
			keyboardReachable("attributes")}},
		step{"define a text attribute with allowed values, optional in the schema", chromedp.Tasks{setValue("#attr-new-key", "dept"),
			setValue("#attr-new-where", "optional"), js(`document.getElementById("attr-new-where").dispatchEvent(new Event("change")), true`, nil),
			visible("#attr-new-allowed"), setValue("#attr-new-allowed", "sales\nhr"), axeAll(src, "define an attribute"),
			click("#attr-form button[type=submit]"), textOf("#status", "The attribute dept is defined"),
			textOf(`#attr-list tr[data-key="dept"]`, "optional"), textOf(`#attr-list tr[data-key="dept"]`, "sales, hr"), schema("allowedValues:[sales hr]")}},
		step{"define a date, not in the schema", chromedp.Tasks{setValue("#attr-new-key", "dueDate"), setValue("#attr-new-type", "DATE"),
			js(`document.getElementById("attr-new-type").dispatchEvent(new Event("change")), true`, nil), wait(`document.getElementById("attr-new-allowed").offsetParent === null`),
			click("#attr-form button[type=submit]"), textOf(`#attr-list tr[data-key="dueDate"]`, "date"), textOf(`#attr-list tr[data-key="dueDate"]`, "not in the schema")}},
		step{"change the allowed values", chromedp.Tasks{click(`#attr-list tr[data-key="dept"] button.edit`), visible("#attr-edit-form"),
			setValue("#attr-edit-allowed", "sales\nhr\nlegal"), axeAll(src, "edit an attribute"), click("#attr-edit-form button[type=submit]"),
			textOf(`#attr-list tr[data-key="dept"]`, "sales, hr, legal"), schema("allowedValues:[sales hr legal]")}},
		step{"delete one", chromedp.Tasks{click(`#attr-list tr[data-key="dueDate"] button.remove`), textOf("#status", "The attribute dueDate is deleted"),
			absent(`#attr-list tr[data-key="dueDate"]`), check(func() error {
				if r := e.s.Do("GET", "/attributes/dueDate?siteId=default", nil, e.admin); r.Status != http.StatusNotFound {
					return fmt.Errorf("dueDate still defined: %d", r.Status)
				}
				return nil
			})}},
		step{"German, phone: the attributes page", chromedp.Tasks{viewport(390, 844), setLangMenu("de"), navigate(e.s.URL + "/console/#/admin/attributes"),
			textOf(`#attr-list tr[data-key="dept"]`, "freiwillig"), noSideways("attributes, phone"), axeAll(src, "attributes, phone, German"), shot("phone-admin-attributes"),
			viewport(1280, 900), setLang("en")}},

		step{"give sam read access to the default site, from lists", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/users"), textOf("#user-list", "sam"),
			setValue(`tr[data-user="sam"] select[id$="-site"]`, "default"), setValue(`tr[data-user="sam"] select[id$="-role"]`, "reader"),
			click(`tr[data-user="sam"] button.give`), textOf(`tr[data-user="sam"]`, "default: reader"), e.inGroup(t, "sam", "default_read")}},
		step{"and govern finance: its group is made", chromedp.Tasks{setValue(`tr[data-user="sam"] select[id$="-site"]`, "finance"),
			setValue(`tr[data-user="sam"] select[id$="-role"]`, "governor"), click(`tr[data-user="sam"] button.give`),
			textOf(`tr[data-user="sam"]`, "finance: governor"), e.inGroup(t, "sam", "finance_govern"), axeAll(src, "users with roles"), shot("admin-users-roles")}},
		step{"a new user with a role", chromedp.Tasks{setValue("#new-username", "neo"), setValue("#new-temp", "temporary-55"),
			setValue("#new-role", "writer"), click("#user-form button[type=submit]"), textOf(`tr[data-user="neo"]`, "default: writer"),
			e.inGroup(t, "neo", "default")}},

		step{"make an intake profile", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/intake"), textOf("#intake", "No intake profiles"), click("#intake-new"),
			visible("#intake-form"), setValue("#intake-form-name", "scans"), setValue("#intake-form-tags", "source=scanner"),
			click("#intake-form-act-OCR"), setValue("#intake-form-dup", "VERSION"), axeAll(src, "intake profile form"), shot("admin-intake-form"),
			click("#intake-form button[type=submit]"), textOf("#status", "The intake profile scans is made"), textOf(`#intake-list tr[data-profile="scans"]`, "/sites/default/intake/scans")}},
		step{"the profile is as set", check(func() error {
			p := e.must(t, "GET", "/sites/default/intakeProfiles/scans", nil, http.StatusOK)
			s := fmt.Sprint(p["intakeProfile"])
			for _, want := range []string{"duplicates:VERSION", "key:source", "value:scanner", "type:FULLTEXT"} {
				if !strings.Contains(s, want) {
					return fmt.Errorf("profile %s lacks %s", s, want)
				}
			}
			if strings.Contains(s, "type:OCR") {
				return fmt.Errorf("profile %s still has OCR", s)
			}
			return nil
		})},
		step{"change where documents go", chromedp.Tasks{click(`#intake-list tr[data-profile="scans"] button.edit`), visible("#intake-form"),
			setValue("#intake-form-path", "Scans/{filename}"), click("#intake-form button[type=submit]"), textOf("#status", "The intake profile scans is saved")}},
		step{"test it: a file goes through and is deleted again", chromedp.Tasks{click(`#intake-list tr[data-profile="scans"] button.test`),
			textOf("#intake-test-result", "scans works: the test file became Scans/quire-intake-test.txt and was deleted again"), axeAll(src, "intake test result"),
			check(func() error {
				if d := e.docID(t, "default", "Scans/quire-intake-test.txt", false); d != "" {
					return fmt.Errorf("the test document is still there")
				}
				return nil
			})}},
		step{"a watched folder on a server without one: told why", chromedp.Tasks{click(`#intake-list tr[data-profile="scans"] button.edit`), click("#intake-form-watch"),
			click("#intake-form button[type=submit]"), textOf("#status", "no folder for scanners set up"), noRawText(), click("#intake-form button[type=button]")}},
		step{"delete it", chromedp.Tasks{click(`#intake-list tr[data-profile="scans"] button.remove`), textOf("#intake", "No intake profiles"), check(func() error {
			e.must(t, "GET", "/sites/default/intakeProfiles/scans", nil, http.StatusNotFound)
			return nil
		})}},

		step{"request a review of a document", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + doc), textOf("#doc-reviews", "No review asked for"),
			setValue("#review-category", "Contract check"), setValue("#review-who", "*other"),
			js(`document.getElementById("review-who").dispatchEvent(new Event("change")), true`, nil), visible("#review-group"), setValue("#review-group", "legal"), setValue("#review-comments", "Clause 4, please"),
			axeAll(src, "request a review"), click("#review-form button[type=submit]"), textOf("#status", "The review is asked for"),
			textOf("#doc-reviews", "Contract check · pending · needs 1 decision · decided by group legal"), textOf("#doc-reviews", "Clause 4, please")}},
		step{"the review is there", check(func() error {
			out := e.must(t, "GET", "/documents/"+doc+"/reviews?siteId=default", nil, http.StatusOK)
			if s := fmt.Sprint(out["reviews"]); !strings.Contains(s, "Contract check") || !strings.Contains(s, "legal") {
				return fmt.Errorf("reviews %s", s)
			}
			return nil
		})},
	)
	b.run(steps...)
}
