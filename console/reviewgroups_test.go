package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"quire/quiretest"
)

// TestConsole_ReviewGroupFromList (issue 47): who decides a review is
// chosen from a list (anyone with write access, a role of the site in
// words, the user's own teams), never typed as "default_govern"; the
// role's group reaches the API and the page names it in words; another
// group is typed only when "Another group" is chosen; German, French, a
// phone.
func TestConsole_ReviewGroupFromList(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "legal"}}, http.StatusOK)
	e.user(t, "wes", "default", "temporary-1", true)
	e.must(t, "POST", "/groups/legal/users", map[string]any{"user": map[string]any{"username": "wes"}}, http.StatusOK)
	doc := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "contract.txt", "content": "contract", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	reviews := func(want string) chromedp.Action {
		return check(func() error {
			out := e.must(t, "GET", "/documents/"+doc+"/reviews?siteId=default", nil, http.StatusOK)
			if s := fmt.Sprint(out["reviews"]); !strings.Contains(s, want) {
				return fmt.Errorf("reviews %s, want %s", s, want)
			}
			return nil
		})
	}
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("wes", password)...)
	steps = append(steps,
		step{"the list offers roles in words and the user's teams", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + doc),
			visible("#review-who"),
			textOf(`#review-who option[value="default_govern"]`, "default: governor"), textOf(`#review-who option[value="default_read"]`, "default: reader"),
			textOf(`#review-who option[value="legal"]`, "legal: writer"), wait(`document.getElementById("review-group").closest(".field").hidden`),
			wait(`![...document.querySelectorAll("#review-form option")].some(o => o.textContent.includes("_govern") || o.textContent.includes("_read"))`),
			axeAll(src, "review request")}},
		step{"choose governors with the keyboard and ask", chromedp.Tasks{tabTo("review-category"), chromedp.KeyEvent("Contract check"),
			tabTo("review-who"), setValue("#review-who", "default_govern"), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.ArrowUp),
			wait(`document.getElementById("review-who").value === "default_govern"`), shot("document-review-request"),
			click("#review-form button[type=submit]"), textOf("#status", "The review is asked for"),
			textOf("#doc-reviews", "decided by default: governor"), reviews("default_govern"),
			wait(`!document.body.innerText.includes("default_govern")`)}},
		step{"another group is typed only when chosen", chromedp.Tasks{setValue("#review-category", "Legal check"), setValue("#review-who", "*other"),
			js(`document.getElementById("review-who").dispatchEvent(new Event("change")), true`, nil), visible("#review-group"),
			tabTo("review-group"), chromedp.KeyEvent("idp-lawyers"), click("#review-form button[type=submit]"),
			textOf("#doc-reviews", "decided by group idp-lawyers"), reviews("idp-lawyers"), axeAll(src, "review requested")}},
		step{"German", chromedp.Tasks{setLang("de"), textOf(`label[for="review-who"]`, "Wer entscheidet"),
			textOf(`#review-who option[value="default_govern"]`, "default: Verwalten"), noRawText(), axeAll(src, "review request de")}},
		step{"French", chromedp.Tasks{setLang("fr"), textOf(`label[for="review-who"]`, "Qui décide"), axeAll(src, "review request fr"), setLang("en")}},
		step{"on a phone", chromedp.Tasks{viewport(390, 844), navigate(e.s.URL + "/console/#/doc/" + doc), visible("#review-who"),
			noSideways("phone review request"), axeAll(src, "phone review request"),
			scrollTo("#review-form"), shot("phone-review-request"), viewport(1280, 900)}},
	)
	b.run(steps...)
}
