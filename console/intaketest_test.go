package console_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"quire/node"
	"quire/quiretest"
)

// TestConsole_IntakeTestFolderAndMail (issue 47): a profile's e-mail
// address shows on the intake page where the server listens for mail,
// and "Test" checks the watched folder and the address too, each said in
// plain words; a folder that cannot take files says so (the server's
// reason behind Details).
func TestConsole_IntakeTestFolderAndMail(t *testing.T) {
	t.Parallel()
	src := axeFile()
	root := t.TempDir()
	e := newEnv(t, func(c *quiretest.Config) {
		c.IntakeSMTP = node.IntakeSMTPConfig{Listen: "127.0.0.1:0", Domain: "scans.test"}
		c.Intake = node.IntakeConfig{FolderRoot: root, Poll: time.Hour}
	})
	e.adminUser(t, "ida")
	e.must(t, "POST", "/sites/default/intakeProfiles", map[string]any{"intakeProfile": map[string]any{"name": "scans", "pathTemplate": "Scans/{filename}",
		"actions": []any{}, "watchFolder": map[string]any{"enabled": true}}}, 201)
	row := `#intake-list tr[data-profile="scans"]`
	b := newBrowser(t, "en-US")
	steps := append([]step{{"open the console", navigate(e.s.URL + "/console/")}}, signIn("ida", password)...)
	steps = append(steps,
		step{"the profile's e-mail address", chromedp.Tasks{navigate(e.s.URL + "/console/#/admin/intake"), textOf(row, "default+scans@scans.test")}},
		step{"test: the upload, the folder and the mail", chromedp.Tasks{click(row + " button.test"),
			textOf("#intake-test-result", "scans works: the test file became Scans/quire-intake-test.txt"),
			textOf(`#intake-checks li[data-source="watchFolder"][data-ok="true"]`, "is there and takes files"),
			textOf(`#intake-checks li[data-source="mail"][data-ok="true"]`, "Mail to default+scans@scans.test reaches scans."),
			axeAll(src, "intake test with folder and mail"), shot("admin-intake-test"), phoneShot(src, "admin-intake-test")}},
		step{"a folder that cannot take files", chromedp.Tasks{check(func() error {
			dir := filepath.Join(root, "default", "scans")
			if err := os.RemoveAll(dir); err != nil {
				return err
			}
			return os.WriteFile(dir, []byte("in the way"), 0o600)
		}), click(row + " button.test"),
			textOf(`#intake-checks li[data-source="watchFolder"][data-ok="false"]`, "The watched folder of scans cannot take files"),
			textOf(`#intake-checks li[data-source="watchFolder"] details`, "Details"), noRawText(), wait(`!document.querySelector("#intake-checks li[data-source=watchFolder] span.state").textContent.includes("cannot be made")`)}},
	)
	b.run(steps...)
}
