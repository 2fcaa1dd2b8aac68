package console_test

// End-to-end tests of the console in headless Chromium (chromedp) against
// an in-process server on a loopback port. Each test is a table of steps
// a person takes; a failing step saves a screenshot and the browser's
// console log (the path is in the failure).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/argon2"

	"quire/auth"
	"quire/quiretest"
	"quire/storage"
)

// step is one thing a person does or sees.
type step struct {
	name string
	do   chromedp.Action
}

// browser is one Chromium tab with its console log.
type browser struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	log []string
}

// TestMain stops the shared Chromium process after the tests and
// removes the quire command the make-run tests built
// (quiretest.QuireBinary).
func TestMain(m *testing.M) {
	code := m.Run()
	quiretest.RemoveQuireBinary()
	chromiums.Lock()
	if chromiums.stop != nil {
		chromiums.stop()
	}
	chromiums.Unlock()
	os.Exit(code)
}

// chromiums is the package's headless Chromium process, started by the
// first test that asks and shared by the tests after it: each test gets a
// browser context of its own (cookies, storage, cache and permissions as
// a fresh profile has them) and a tab in it. A tab in another language
// than the process's en-US is given it by the tab's emulation (newBrowser):
// one process for every language, where a process per language (--lang)
// cost a browser, GPU, network and zygote processes each (issue 45).
var chromiums struct {
	sync.Mutex
	ctx  context.Context
	ua   string // the browser's user agent, kept when a tab's languages are set
	stop func()
}

// chromium returns the shared Chromium process, starting it.
func chromium(t *testing.T) context.Context {
	t.Helper()
	exe := quiretest.NeedProgram(t, "chromium", "chromium")
	chromiums.Lock()
	defer chromiums.Unlock()
	if chromiums.ctx != nil && chromiums.ctx.Err() == nil {
		return chromiums.ctx
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.Headless, chromedp.DisableGPU, chromedp.WindowSize(1280, 900), chromedp.Flag("lang", "en-US"),
		// chromedp's defaults (a flag given twice keeps the last) and the
		// omnibox's WebUI popups: every window of headless Chromium 156
		// preloads two in a renderer of their own (chrome://omnibox-popup.top-chrome),
		// about as much CPU as the console's own renderer; no test has an
		// omnibox. The package took 706 CPU-s with them, 499 and 510
		// without (all processes, Chromium's included; issue 45). Nor a
		// spare renderer, started ahead for a navigation to come: each
		// test's browser context started one more that it never used
		// (ten contexts with a sign-in page each: 15.3 CPU-s against
		// 17.6, three runs each).
		chromedp.Flag("disable-features", "site-per-process,Translate,BlinkGenPropertyTrees,"+
			"WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup,PreloadTopChromeWebUI,"+
			"SpareRendererForSitePerProcess"),
		// One renderer process for each browser context, not two: every
		// test's tab opens on about:blank, which has a renderer, and its
		// first navigation to the console swapped to a second one, since
		// the console's Cross-Origin-Opener-Policy: same-origin puts it in
		// a browsing context group of its own (a tab opened at a console
		// URL did the same). Above the limit Chromium gives a new group a
		// renderer of the same browser context; contexts never share one,
		// so each test keeps its own. Ten tabs, each opening the sign-in
		// page: 21 renderers and 31.2/31.7 CPU-s, 11 and 25.3/23.2 with
		// the limit (issue 45).
		chromedp.Flag("renderer-process-limit", "1"),
		// A loaded CI machine starts Chromium slowly (the default is 20 s).
		chromedp.WSURLReadTimeout(90*time.Second))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	var ua string
	if err := chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		_, _, _, ua, _, err = cdpbrowser.GetVersion().Do(ctx)
		return err
	})); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	chromiums.ctx, chromiums.ua = ctx, ua
	chromiums.stop = func() { cancel(); cancelAlloc() }
	return ctx
}

// newBrowser opens a tab in a fresh browser context of the shared
// headless Chromium (skipped without it, failed under CI), in language
// lang as a browser set to it has it: the Accept-Language it sends, the
// page's navigator.language and navigator.languages, and the locale of
// Intl's dates and numbers; init scripts run before the console loads.
func newBrowser(t *testing.T, lang string, init ...string) *browser {
	t.Helper()
	shared := chromium(t)
	// The browser context and its tab are made here, not with
	// chromedp.WithNewBrowserContext: headless Chromium opens a tab in a
	// new browser context only as a new window.
	var bc cdp.BrowserContextID
	var tab target.ID
	if err := chromedp.Run(shared, chromedp.ActionFunc(func(ctx context.Context) error {
		exec := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser)
		var err error
		if bc, err = target.CreateBrowserContext().Do(exec); err != nil {
			return err
		}
		tab, err = target.CreateTarget("about:blank").WithBrowserContextID(bc).WithNewWindow(true).Do(exec)
		return err
	})); err != nil {
		t.Fatalf("open a browser context: %v", err)
	}
	ctx, cancel := chromedp.NewContext(shared, chromedp.WithTargetID(tab))
	t.Cleanup(func() {
		cancel()
		_ = chromedp.Run(shared, chromedp.ActionFunc(func(ctx context.Context) error {
			return target.DisposeBrowserContext(bc).Do(cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Browser))
		}))
	})
	b := &browser{t: t, ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			b.log = append(b.log, string(e.Type)+": "+strings.Join(parts, " "))
		case *runtime.EventExceptionThrown:
			b.log = append(b.log, "exception: "+e.ExceptionDetails.Error())
		}
	})
	// chromedp enables the Network and CSS domains on every tab; no test
	// reads their events (a navigation waits on Page's), and each request
	// and style sheet would be reported to this process (issue 45).
	actions := []chromedp.Action{network.Disable(), css.Disable()}
	if lang != "en-US" {
		// What --lang=de-DE makes of a browser: Accept-Language de-DE,de
		// and navigator.languages ["de-DE", "de"].
		accept := lang
		if base, _, ok := strings.Cut(lang, "-"); ok {
			accept += "," + base
		}
		chromiums.Lock()
		ua := chromiums.ua
		chromiums.Unlock()
		actions = append(actions, emulation.SetLocaleOverride().WithLocale(lang),
			emulation.SetUserAgentOverride(ua).WithAcceptLanguage(accept))
	}
	for _, src := range init {
		actions = append(actions, chromedp.ActionFunc(func(ctx context.Context) error {
			_, err := page.AddScriptToEvaluateOnNewDocument(src).Do(ctx)
			return err
		}))
	}
	// Dialogs (confirm before a purge) are answered yes.
	actions = append(actions, chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(`window.confirm = () => true;`).Do(ctx)
		return err
	}))
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

// run takes the steps in order, each within 30 s; the first that fails
// saves a screenshot and the console log and fails the test.
func (b *browser) run(steps ...step) {
	b.t.Helper()
	for _, s := range steps {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		began := time.Now()
		err := chromedp.Run(ctx, s.do)
		cancel()
		b.t.Logf("step %q: %v", s.name, time.Since(began).Round(time.Millisecond))
		if err != nil {
			b.t.Fatalf("step %q: %v\n%s", s.name, err, b.artifacts(s.name))
		}
	}
}

// artifacts saves a screenshot and the console log, and says where.
func (b *browser) artifacts(name string) string {
	dir := os.Getenv("QUIRE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "quire-console-artifacts")
	}
	slug := regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(b.t.Name()+"-"+name, "_")
	dir = filepath.Join(dir, slug)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "no artifacts: " + err.Error()
	}
	var png []byte
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	var html string
	_ = chromedp.Run(ctx, chromedp.FullScreenshot(&png, 80), chromedp.Evaluate(`document.documentElement.outerHTML`, &html))
	_ = os.WriteFile(filepath.Join(dir, "screenshot.jpg"), png, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "page.html"), []byte(html), 0o644)
	b.mu.Lock()
	logText := strings.Join(b.log, "\n")
	b.mu.Unlock()
	_ = os.WriteFile(filepath.Join(dir, "console.log"), []byte(logText), 0o644)
	return fmt.Sprintf("screenshot, page and console log in %s; console log:\n%s", dir, logText)
}

// js evaluates an expression (promises awaited) into out.
func js(expr string, out any) chromedp.Action {
	return chromedp.Evaluate(expr, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})
}

// wait polls a JavaScript condition for up to 20 s; a condition that
// throws (an element not rendered yet) counts as false.
func wait(cond string) chromedp.Action {
	return chromedp.Poll("(() => { try { return !!("+cond+"); } catch (e) { return false; } })()", nil, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond))
}

// textOf waits until the element's text contains want.
func textOf(sel, want string) chromedp.Action {
	return wait(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want))
}

// absent asserts that nothing matches sel (after the page rendered).
// absent waits until no element matches sel (a page re-renders after the
// answer that a status line already shows), failing after 20 s.
func absent(sel string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		deadline := time.Now().Add(20 * time.Second)
		for {
			var n int
			if err := chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n).Do(ctx); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%d elements match %s after 20 s, want none", n, sel)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

func check(f func() error) chromedp.Action {
	return chromedp.ActionFunc(func(context.Context) error { return f() })
}

// The helpers below find an element with document.querySelector in the
// page, polling there (chromedp.Poll: one DevTools call for a wait), not
// with chromedp's DOM-domain queries: a DOM query took four or five
// calls (querySelector, box model, resolve, call, release) each time it
// asked, and pushed the element's ancestors and their children to this
// process, after which Chromium reported changes under them as DOM
// events that chromedp mirrored (35 to 385 a tab; 2 to 19 with these;
// issue 45). Each does what the chromedp action named in its doc does.

// rendered is chromedp.NodeVisible's test in JavaScript about e: the
// element has a box.
const rendered = `(e.offsetWidth || e.offsetHeight || e.getClientRects().length)`

// query waits up to 20 s until sel matches an element (the first) for
// which cond holds, then evaluates do in the same turn of the page and
// keeps its value in out (when out is not nil); cond and do are
// JavaScript about e, the element. A cond that throws counts as false; a
// do that throws fails.
func query(sel, cond, do string, out any) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		expr := fmt.Sprintf(`(() => { let e; try { e = document.querySelector(%s); if (!e || !(%s)) return false; } catch (err) { return false; }
			try { return {v: (() => %s)() ?? null}; } catch (err) { return {err: String(err)}; } })()`, jsq(sel), cond, do)
		var raw []byte // {"v": do's value} or {"err": what it threw}
		err := chromedp.Poll(expr, &raw, chromedp.WithPollingTimeout(20*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)).Do(ctx)
		if errors.Is(err, chromedp.ErrPollingTimeout) {
			return fmt.Errorf("no element %s for which %s after 20 s", sel, cond)
		}
		if err != nil {
			return err
		}
		var res struct {
			V   json.RawMessage
			Err string
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return err
		}
		if res.Err != "" {
			return fmt.Errorf("%s: %s", sel, res.Err)
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(res.V, out)
	})
}

// visible waits until sel's element is rendered (chromedp.WaitVisible).
func visible(sel string) chromedp.Action { return query(sel, rendered, "true", nil) }

// present waits until sel matches an element (chromedp.WaitReady).
func present(sel string) chromedp.Action { return query(sel, "true", "true", nil) }

// setValue sets the value of sel's element and sends input and change
// events, as chromedp.SetValue.
func setValue(sel, value string) chromedp.Action {
	return query(sel, "true", fmt.Sprintf(`(e.value = %s, e.dispatchEvent(new Event("input", {bubbles: true})), e.dispatchEvent(new Event("change", {bubbles: true})))`, jsq(value)), nil)
}

// valueOf reads the value of sel's element (chromedp.Value).
func valueOf(sel string, value *string) chromedp.Action { return query(sel, "true", "e.value", value) }

// textIn reads the text of sel's element as it is rendered (chromedp.Text).
func textIn(sel string, text *string) chromedp.Action {
	return query(sel, "true", rendered+` ? e.innerText : ""`, text)
}

// attrOf reads an attribute of sel's element (chromedp.AttributeValue).
func attrOf(sel, name string, value *string) chromedp.Action {
	return query(sel, "true", fmt.Sprintf(`e.getAttribute(%s)`, jsq(name)), value)
}

// scrollTo scrolls sel's element into view (chromedp.ScrollIntoView).
func scrollTo(sel string) chromedp.Action {
	return query(sel, "true", "e.scrollIntoViewIfNeeded()", nil)
}

// focus gives sel's element the focus (chromedp.Focus), failing when it
// does not take it.
func focus(sel string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var ok bool
		if err := query(sel, "true", "(e.focus(), document.activeElement === e)", &ok).Do(ctx); err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s did not take the focus", sel)
		}
		return nil
	})
}

// sendKeys types keys into sel's element once it is rendered, focusing
// it first (chromedp.SendKeys).
func sendKeys(sel, keys string) chromedp.Action {
	return chromedp.Tasks{visible(sel), focus(sel), chromedp.KeyEvent(keys)}
}

// click waits until sel's element is rendered, scrolls it into view and
// clicks the middle of its first box with the mouse, as chromedp.Click:
// the page's hit test decides what the click lands on.
func click(sel string, opts ...chromedp.MouseOption) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var at struct{ X, Y float64 }
		if err := query(sel, rendered, `(e.scrollIntoViewIfNeeded(), (r => ({x: r.left + r.width / 2, y: r.top + r.height / 2}))(e.getClientRects()[0]))`, &at).Do(ctx); err != nil {
			return err
		}
		return chromedp.MouseClickXY(at.X, at.Y, opts...).Do(ctx)
	})
}

func navigate(url string) chromedp.Action { return chromedp.Navigate(url) }

// signIn fills the sign-in form and waits for the signed-in header.
func signIn(user, password string) []step {
	return []step{
		{"sign-in page", visible("#login")},
		{"type user name and password", chromedp.Tasks{setValue("#username", user), setValue("#password", password)}},
		{"sign in", click("#login button[type=submit]")},
		{"signed in as " + user, textOf("#user", user)},
	}
}

// env is a server with users: admin (Admins), staff (writes the default
// site) and reader (reads it), each with a password set.
type env struct {
	s     *quiretest.Server
	admin string
}

const password = "correct-horse-9"

func newEnv(t *testing.T, opts ...quiretest.Option) *env {
	t.Helper()
	s := quiretest.NewServer(t, opts...)
	e := &env{s: s, admin: s.Admin()}
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "default"}}, http.StatusOK)
	e.must(t, "POST", "/groups", map[string]any{"group": map[string]any{"name": "default_read"}}, http.StatusOK)
	return e
}

// must sends an admin request and checks its status.
func (e *env) must(t *testing.T, method, path string, body any, status int) map[string]any {
	t.Helper()
	r := e.s.Do(method, path, body, e.admin)
	if r.Err != nil || r.Status != status {
		t.Fatalf("%s %s: %d %s %v, want %d", method, path, r.Status, r.Body, r.Err, status)
	}
	out := map[string]any{}
	_ = json.Unmarshal(r.Body, &out)
	return out
}

// adminUser creates a member of Admins (the group made when missing), its
// password set.
func (e *env) adminUser(t *testing.T, name string) {
	t.Helper()
	if r := e.s.Do("POST", "/groups", map[string]any{"group": map[string]any{"name": "Admins"}}, e.admin); r.Status != http.StatusOK && r.Status != http.StatusConflict {
		t.Fatalf("Admins group: %d %s", r.Status, r.Body)
	}
	e.user(t, name, "Admins", "temporary-1", true)
}

// user creates a directory user in group with a temporary password; with
// set, the first password is chosen as the challenge does (seedUser).
// A user name that is an e-mail address is the user's address too, as
// POST /users makes it.
func (e *env) user(t *testing.T, name, group, temp string, set bool) {
	t.Helper()
	email := ""
	if strings.Contains(name, "@") {
		email = name
	}
	e.seedUser(t, name, email, temp, set)
	if group != "" {
		e.must(t, "POST", "/groups/"+group+"/users", map[string]any{"user": map[string]any{"username": name}}, http.StatusOK)
	}
}

// hashes are the argon2id hashes of the package's test passwords, each
// made once per process, with a memory cost of 1 MiB and one pass
// (production hashes take 19 MiB and two, auth.HashPassword). A sign-in
// in the browser checks the password against the stored hash with the
// parameters the hash names (auth.VerifyPassword), so each of the
// package's sign-ins cost a production hash under -race: about a quarter
// of a CPU-second, 45 sign-ins and more (issue 45). Making the users
// through POST /users, POST /login and POST /respondToAuthChallenge cost
// three more each. A password a test sets in the browser (the
// first-password challenge, a reset) is hashed as in production.
var hashes sync.Map // password -> func() (string, error)

func hashOf(t *testing.T, pw string) string {
	t.Helper()
	f, _ := hashes.LoadOrStore(pw, sync.OnceValues(func() (string, error) {
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return "", err
		}
		const memory, passes = 1024, 1 // KiB
		b64 := base64.RawStdEncoding
		h := fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=1$%s$%s", argon2.Version, memory, passes, b64.EncodeToString(salt),
			b64.EncodeToString(argon2.IDKey([]byte(pw), salt, passes, memory, 1, 32)))
		if !auth.VerifyPassword(h, pw) {
			return "", fmt.Errorf("the hash %s does not verify", h)
		}
		return h, nil
	}))
	h, err := f.(func() (string, error))()
	if err != nil {
		t.Fatalf("hash a test password: %v", err)
	}
	return h
}

// seedUser makes a directory user through the commands POST /users and,
// with set, the first-password challenge apply (OpAddUser with the
// temporary password's hash; OpSetPassword "challenge" with the hash of
// password), each through the store's Apply as a handler's is, with the
// hashes of hashOf.
func (e *env) seedUser(t *testing.T, name, email, temp string, set bool) {
	t.Helper()
	name = storage.NormalizeUsername(name)
	apply := func(op storage.Op, payload any) storage.Result {
		t.Helper()
		c, err := storage.NewCommand(op, "", "admin", time.Now(), payload)
		if err != nil {
			t.Fatalf("%s %s: %v", op, name, err)
		}
		res, err := e.s.Node.DB.Apply(context.Background(), c)
		if err != nil {
			t.Fatalf("%s %s: %v", op, name, err)
		}
		return res
	}
	apply(storage.OpAddUser, storage.AddUser{User: storage.User{Username: name, Email: email, PasswordHash: hashOf(t, temp)}})
	if set {
		apply(storage.OpSetPassword, storage.SetPassword{Username: name, Hash: hashOf(t, password), Via: "challenge"})
	}
}

// shot saves a screenshot of the viewport as <name>.png in
// $QUIRE_SCREENSHOTS when it is set (the main pages for the docs,
// testdata/screenshots), and does nothing otherwise. The PNG is made
// small: the screen's 256 most frequent colours, no dithering (a page is
// mostly flat colour), best compression; about a third of the browser's.
func shot(name string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		dir := os.Getenv("QUIRE_SCREENSHOTS")
		if dir == "" {
			return nil
		}
		var raw []byte
		if err := chromedp.CaptureScreenshot(&raw).Do(ctx); err != nil {
			return err
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		pal := image.NewPaletted(img.Bounds(), commonColors(img, 256))
		draw.Draw(pal, img.Bounds(), img, image.Point{}, draw.Src)
		var out bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, pal); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name+".png"), out.Bytes(), 0o644)
	})
}

// commonColors is the palette of an image's n most frequent colours
// (counted at 5 bits a channel).
func commonColors(img image.Image, n int) color.Palette {
	counts := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			counts[(r>>11)<<10|(g>>11)<<5|bl>>11]++
		}
	}
	keys := make([]uint32, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return counts[keys[i]] > counts[keys[j]] || counts[keys[i]] == counts[keys[j]] && keys[i] < keys[j]
	})
	five := func(v uint32) uint8 { return uint8(v<<3 | v>>2) }
	var p color.Palette
	for _, k := range keys {
		if len(p) == n {
			break
		}
		p = append(p, color.RGBA{five(k >> 10 & 31), five(k >> 5 & 31), five(k & 31), 255})
	}
	return p
}
