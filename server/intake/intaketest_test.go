package intake_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestIntakeProfile_TestAndMailAddress (issue 47): a profile's answer
// carries its scan-to-e-mail address when the server listens for mail;
// POST .../test checks the watched folder (made, a file written and
// removed) and the mail address (it routes to the profile and the
// listener greets), and mail to that address becomes a document. What
// cannot work is said, never a 500: no listener, no watched folder, a
// folder that cannot be made.
func TestIntakeProfile_TestAndMailAddress(t *testing.T) {
	root := t.TempDir()
	s := servertest.SmtpServer(t, nil, intakeRoot(root))
	admin := s.Admin()
	key := servertest.APIKey(t, s, "READ", "WRITE")
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scans", "pathTemplate": "Scans/{filename}", "actions": []any{},
		"watchFolder": map[string]any{"enabled": true}})
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "posts", "actions": []any{}})
	p := quiretest.Obj(t, s.Do(http.MethodGet, "/sites/default/intakeProfiles/scans", nil, admin).JSON(t)["intakeProfile"])
	addr := quiretest.Str(t, p, "mailAddress")
	if addr != "default+scans@scans.test" {
		t.Fatalf("mailAddress %q", addr)
	}
	r := s.Do(http.MethodPost, "/sites/default/intakeProfiles/scans/test", nil, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	b := r.JSON(t)
	folder, mail := quiretest.Item(t, b, "tests", 0), quiretest.Item(t, b, "tests", 1)
	if quiretest.Str(t, folder, "source") != "watchFolder" || folder["ok"] != true || !strings.HasPrefix(quiretest.Str(t, folder, "path"), root) {
		t.Fatalf("folder test: %v", folder)
	}
	if ents, _ := os.ReadDir(quiretest.Str(t, folder, "path")); len(ents) != 2 { // done/ and failed/, the test file gone
		t.Fatalf("the folder holds %d entries after the test", len(ents))
	}
	if quiretest.Str(t, mail, "source") != "mail" || mail["ok"] != true || quiretest.Str(t, mail, "mailAddress") != addr {
		t.Fatalf("mail test: %v", mail)
	}
	// The address works: a mail to it is a document of the profile.
	msg := buildMail("<test-1@mfp.test>", "scan", mailPart{"page.txt", "text/plain", "", []byte("scanned page\r\n")})
	if res := sendMail(t, s.Node.SMTPAddr(), "apikey", key, []string{addr}, msg, nil); res.err != nil {
		t.Fatalf("send to %s: %s: %v", addr, res.step, res.err)
	}
	if paths := sitePaths(t, s, admin, "default"); paths["Scans/page.txt"] == "" {
		t.Fatalf("documents after the mail: %v", paths)
	}

	for _, c := range []struct {
		name, path string
		body       any
		want       int
		resp       string
	}{
		{"a profile without a watched folder", "/sites/default/intakeProfiles/posts/test", map[string]any{"source": "watchFolder"}, 200,
			`{"tests":[{"source":"watchFolder","ok":false,"message":"the profile has no watched folder"}]}`},
		{"mail only", "/sites/default/intakeProfiles/posts/test", map[string]any{"source": "mail"}, 200,
			`{"tests":[{"source":"mail","ok":true,"message":"mail to the address reaches this profile","mailAddress":"default+posts@scans.test"}]}`},
		{"an unknown source", "/sites/default/intakeProfiles/posts/test", map[string]any{"source": "fax"}, 400,
			`{"errors":[{"key":"source","error":"invalid 'source', use watchFolder or mail"}]}`},
		{"an unknown profile", "/sites/default/intakeProfiles/nope/test", nil, 404, ""},
	} {
		r := s.Do(http.MethodPost, c.path, c.body, admin)
		if r.Status != c.want || c.resp != "" && strings.TrimSpace(string(r.Body)) != c.resp {
			t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
		}
	}
	if r := s.Do(http.MethodPost, "/sites/default/intakeProfiles/scans/test", nil, s.Token("wes", "default")); r.Status != http.StatusUnauthorized {
		t.Errorf("a writer (not a governor): %d %s", r.Status, r.Body)
	}

	// A folder that cannot be made (a file is where it should be), and a
	// server without a mail listener.
	dir := quiretest.Str(t, folder, "path")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	b = s.Do(http.MethodPost, "/sites/default/intakeProfiles/scans/test", map[string]any{"source": "watchFolder"}, admin).JSON(t)
	if f := quiretest.Item(t, b, "tests", 0); f["ok"] != false || !strings.Contains(quiretest.Str(t, f, "message"), "the folder cannot be made") {
		t.Fatalf("a file in the folder's place: %v", f)
	}
	plain := quiretest.NewServer(t)
	servertest.AddIntakeProfile(t, plain, plain.Admin(), map[string]any{"name": "scans", "actions": []any{}})
	if p := quiretest.Obj(t, plain.Do(http.MethodGet, "/sites/default/intakeProfiles/scans", nil, plain.Admin()).JSON(t)["intakeProfile"]); p["mailAddress"] != nil {
		t.Fatalf("a mail address without a listener: %v", p)
	}
	r = plain.Do(http.MethodPost, "/sites/default/intakeProfiles/scans/test", map[string]any{"source": "mail"}, plain.Admin())
	servertest.MustBody(t, r, `{"tests":[{"source":"mail","ok":false,"message":"the server has no scan-to-e-mail listener (intake_smtp.listen)"}]}`)
}
