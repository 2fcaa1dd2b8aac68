package console_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"quire/quiretest"
)

// setLang picks a language in the header's switch, as a person does.
func setLang(l string) chromedp.Action {
	return chromedp.Tasks{setValue("#lang", l),
		js(`document.getElementById("lang").dispatchEvent(new Event("change")), true`, nil),
		wait(fmt.Sprintf(`document.documentElement.lang === %q`, l))}
}

// noRawText fails when the page shows an API status code or enum name.
func noRawText() chromedp.Action {
	return chromedp.Tasks{
		wait(`document.body.innerText.length > 0`),
		wait(`!["(401)", "(400)", "(404)", "refused (", "CONFIRMED", "FORCE_CHANGE_PASSWORD", "UPDATE_VERSION", "NEW_VERSION", "HTTP "].some(w => document.body.innerText.includes(w))`),
	}
}

// TestConsole_PlainWords: the console speaks the user's language and no
// API codes. A wrong password and a disabled account are explained in
// German; sizes and counts follow the language ("50,5 KB", "1 result"
// against "2 results"); a user's state, an action and the activity trail
// are words, not enum names; "Forgot your password?" on a server that
// cannot mail says so and goes away. French follows the same way
// ("50,5 Ko", "1 résultat").
func TestConsole_PlainWords(t *testing.T) {
	t.Parallel()
	src := axeFile()
	e := newEnv(t)
	e.adminUser(t, "ada")
	e.user(t, "newbie", "default", "temporary-2", false)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "plain/big.txt", "content": strings.Repeat("x", 50500) + " walrus", "contentType": "text/plain"}, http.StatusCreated)
	e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "plain/other.txt", "content": "walrus and penguin", "contentType": "text/plain"}, http.StatusCreated)
	id := quiretest.Str(t, e.must(t, "POST", "/documents?siteId=default", map[string]any{"path": "plain/letter.txt", "content": "first penguin", "contentType": "text/plain"}, http.StatusCreated), "documentId")
	e.must(t, "PATCH", "/documents/"+id+"?siteId=default", map[string]any{"content": "second", "contentType": "text/plain"}, http.StatusOK)
	vs := e.must(t, "GET", "/documents/"+id+"/versions?siteId=default", nil, http.StatusOK)
	list, _ := vs["documents"].([]any)
	if len(list) != 2 {
		t.Fatalf("versions: %v", vs)
	}
	old, _ := list[1].(map[string]any)["versionKey"].(string)
	e.must(t, "PUT", "/documents/"+id+"/versions?siteId=default", map[string]any{"versionKey": old}, http.StatusOK)

	b := newBrowser(t, "de-DE", `Object.defineProperty(navigator, "languages", {get: () => ["de-DE", "de"]});`)
	steps := []step{
		{"open the console in German", chromedp.Tasks{navigate(e.s.URL + "/console/"), textOf("#login h1", "Bei Quire anmelden")}},
		{"a wrong password, in plain German", chromedp.Tasks{setValue("#username", "ada"), setValue("#password", "not-the-password"), click("#login button[type=submit]"),
			textOf("#login .msg.error", "Benutzername oder Passwort ist falsch"), noRawText()}},
		{"this server cannot mail: no \"Passwort vergessen?\"", chromedp.Tasks{visible(`#login[data-reset="no"]`),
			absent("#forgot"), noRawText(), axeAll(src, "sign-in, no reset by mail")}},
		{"sign in", chromedp.Tasks{setValue("#username", "ada"), setValue("#password", password), click("#login button[type=submit]"), textOf("#user", "ada")}},
		{"sizes in German", chromedp.Tasks{navigate(e.s.URL + "/console/#/browse/plain"), textOf("#entries", "big.txt"), textOf("#entries", "50,5\u00a0KB")}},
		{"a user's state in words", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/users"), textOf(`tr[data-user="newbie"]`, "muss bei der nächsten Anmeldung ein Passwort wählen"),
			textOf(`tr[data-user="ada"]`, "hat sich angemeldet"), noRawText()}},
		{"the activity trail in words", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#activity", "frühere Version wiederhergestellt (Inhalt"),
			textOf("#activity", "neue Version (Inhalt"), noRawText()}},
		{"English: sizes", chromedp.Tasks{setLang("en"), navigate(e.s.URL + "/console/#/browse/plain"), textOf("#entries", "50.5\u00a0KB")}},
		{"one result, two results", chromedp.Tasks{navigate(e.s.URL + "/console/#/search?q=penguin"), searchUntil("letter.txt"), textOf("#result-count", "2 results"),
			navigate(e.s.URL + "/console/#/search?q=first"), searchUntil("letter.txt"), wait(`document.getElementById("result-count").textContent === "1 result"`)}},
		{"French: the whole console follows", chromedp.Tasks{setLang("fr"), textOf("header nav", "Corbeille"), textOf("#site-name", "Espace"),
			navigate(e.s.URL + "/console/#/browse/plain"), textOf("main h1", "plain"), textOf("#entries thead", "Taille"), textOf("#entries", "50,5 Ko")}},
		{"French plurals", chromedp.Tasks{navigate(e.s.URL + "/console/#/search?q=penguin"), searchUntil("letter.txt"), textOf("#result-count", "2 résultats"),
			navigate(e.s.URL + "/console/#/search?q=first"), searchUntil("letter.txt"), wait(`document.getElementById("result-count").textContent === "1 résultat"`),
			axeAll(src, "French search")}},
		{"French words for codes", chromedp.Tasks{navigate(e.s.URL + "/console/#/doc/" + id), textOf("#activity", "version antérieure restaurée (contenu"), noRawText(),
			navigate(e.s.URL + "/console/#/admin/users"), textOf(`tr[data-user="newbie"]`, "doit choisir un mot de passe"), noRawText()}},
		{"the choice stays after a reload", chromedp.Tasks{chromedp.Reload(), textOf("header nav", "Corbeille"), wait(`document.documentElement.lang === "fr"`)}},
	}
	b.run(steps...)
}
