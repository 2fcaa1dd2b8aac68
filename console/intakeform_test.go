package console_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// TestConsole_IntakeFormPickers (issue 47): the intake form sets the
// attributes, the user and the groups a profile gives its documents: an
// attribute's key is chosen from the site's attributes (added with the
// keyboard, another with the mouse and removed again), the user from the
// users, a group from the site's roles in words (Space ticks it); the
// profile saved says so through the API, and the form opened again shows
// what it holds, then takes the attribute and the group away.
func TestConsole_IntakeFormPickers(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ida")
	e.user(t, "scanbot", "default", "temporary-1", false)
	for _, k := range []string{"department", "sender"} {
		e.must(t, "POST", "/attributes?siteId=default", map[string]any{"attribute": map[string]any{"key": k, "dataType": "STRING"}}, http.StatusCreated)
	}
	profile := func() map[string]any {
		out := e.must(t, "GET", "/sites/default/intakeProfiles/letters", nil, http.StatusOK)
		return quiretest.Obj(t, out["intakeProfile"])
	}
	form := "#intake-form"
	writer := form + ` input[type=checkbox][value="default"]`
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("ida", password)...)
	steps = append(steps,
		step{"a new profile's form", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/intake"), click("#intake-new"), visible(form),
			wait(`document.querySelector("#intake-form-attr-add") && !document.querySelector("#intake-form-attr-add").disabled`),
			textOf(form, "default: writer"), sendKeys("#intake-form-name", "letters")}},
		step{"an attribute with the keyboard: its key from the list", chromedp.Tasks{focus("#intake-form-attr-add"), chromedp.KeyEvent(kb.Enter),
			wait(`document.activeElement && document.activeElement.id === "intake-form-attr-0-key"`),
			wait(`[...document.querySelectorAll("#intake-form-attr-0-key option")].map(o => o.value).join() === "department,sender"`),
			setValue("#intake-form-attr-0-key", "sender"), chromedp.KeyEvent(kb.Tab),
			wait(`document.activeElement.id === "intake-form-attr-0-value"`), chromedp.KeyEvent("{sender}")}},
		step{"another with the mouse, removed again", chromedp.Tasks{click("#intake-form-attr-add"), visible("#intake-form-attr-1-key"),
			sendKeys("#intake-form-attr-1-value", "Finance"), click(`#intake-form-attrs li:nth-child(2) button.remove-attr`),
			wait(`document.querySelectorAll("#intake-form-attrs li").length === 1 && document.activeElement.id === "intake-form-attr-add"`)}},
		step{"the user from the list, a group with Space", chromedp.Tasks{
			wait(`[...document.querySelectorAll("#intake-form-users option")].some(o => o.value === "scanbot")`),
			sendKeys("#intake-form-user", "scanbot"),
			focus(writer), chromedp.KeyEvent(" "), wait(`document.querySelector(` + jsq(writer) + `).checked`),
			js(`document.querySelector("#intake-form-attrs").scrollIntoView({block: "center"}), true`, nil), axeAll(src, "intake form with attributes, user and groups"), shot("admin-intake-form-pickers"),
			viewport(390, 844), js(`document.querySelector("#intake-form-attrs").scrollIntoView({block: "start"}), true`, nil), phoneShot(src, "admin-intake-form-pickers")}},
		step{"saved", chromedp.Tasks{click(form + " button[type=submit]"), absent(form), textOf(`#intake-list tr[data-profile="letters"]`, "letters")}},
		step{"the API has them", check(func() error {
			p := profile()
			got, _ := json.Marshal([]any{p["attributes"], p["userId"], p["groups"]})
			if want := `[[{"key":"sender","stringValue":"{sender}"}],"scanbot",["default"]]`; string(got) != want {
				return fmt.Errorf("profile's attributes, user and groups: %s, want %s", got, want)
			}
			return nil
		})},
		step{"opened again, the form shows them", chromedp.Tasks{click(`#intake-list tr[data-profile="letters"] button.edit`), visible(form),
			wait(`document.querySelector("#intake-form-attr-0-key").value === "sender" && document.querySelector("#intake-form-attr-0-value").value === "{sender}"`),
			wait(`document.querySelector("#intake-form-user").value === "scanbot"`), wait(`document.querySelector(` + jsq(writer) + `).checked`)}},
		step{"the attribute and the group taken away", chromedp.Tasks{click(`#intake-form-attrs li button.remove-attr`), click(writer),
			click(form + " button[type=submit]"), absent(form)}},
		step{"the API has none", check(func() error {
			p := profile()
			if a, _ := p["attributes"].([]any); len(a) != 0 {
				return fmt.Errorf("attributes left: %v", p["attributes"])
			}
			if g, _ := p["groups"].([]any); len(g) != 0 {
				return fmt.Errorf("groups left: %v", p["groups"])
			}
			return nil
		})},
	)
	b.run(steps...)
}

// jsq quotes s as a JavaScript string.
func jsq(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
