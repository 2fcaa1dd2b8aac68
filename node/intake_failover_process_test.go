package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/smtp"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCluster_IntakeFailoverProcesses runs three `quire serve` processes
// sharing one watched-folder root (a network share), each with its own
// scan-to-e-mail listener.
//
// A mail with two attachments sent to a follower's SMTP listener becomes
// two documents through the leader's log, once on every member, and the
// same mail sent again (same Message-ID) to the other follower creates
// nothing.
//
// Then the leader is SIGKILLed mid-intake: one file's intake is committed
// but the file could not be moved to done/ yet (done/sub is blocked by a
// plain file, so the leader is stuck in that window), and a batch of
// larger files is being taken when the first of them shows through a
// follower. After the new leader takes the folder over, every file is one
// document on both survivors (none lost, none twice, KEEP_BOTH would keep
// a second copy) and every file is in done/ once. Writers on every
// member post documents from the batch through the kill; the old leader
// starts again, and every acknowledged write is on all three, every
// other on all or none, and the replica digests are equal.
func TestCluster_IntakeFailoverProcesses(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	root := t.TempDir()
	smtpAddrs := []string{freeAddr(t), freeAddr(t), freeAddr(t)}
	sc := startServeClusterWith(t, func(i int) []string {
		return []string{"--intake-folder-root", root, "--intake-poll", "100ms", "--intake-smtp-listen", smtpAddrs[i]}
	})
	c, tok := sc.c, sc.tok
	// L leads (n1 unless the lead moved while the cluster formed), F
	// follow.
	L := sc.agree(t, 30*time.Second)
	F := []int{(L + 1) % 3, (L + 2) % 3}
	r := apiDo(c, http.MethodPost, sc.url(L)+"/sites/default/intakeProfiles", tok, map[string]any{"intakeProfile": map[string]any{
		"name": "scan", "pathTemplate": "Scans/{filename}", "actions": []any{}, "duplicates": "KEEP_BOTH",
		"watchFolder": map[string]any{"stableSeconds": 1}}})
	if r.status != http.StatusCreated {
		t.Fatalf("profile: %d %s", r.status, r.body)
	}
	r = apiDo(c, http.MethodPost, sc.url(L)+"/sites/default/apiKeys", tok, map[string]any{"name": "mfp", "permissions": []string{"READ", "WRITE"}})
	var key struct {
		APIKey string `json:"apiKey"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &key) != nil || key.APIKey == "" {
		t.Fatalf("api key: %d %s", r.status, r.body)
	}
	// paths counts the intake's documents (Scans/...) on node i; the
	// history's writers add others, so every page is read.
	paths := func(i int) (map[string]int, bool) {
		out := map[string]int{}
		next := ""
		for range 1000 {
			u := sc.url(i) + "/documents?limit=100"
			if next != "" {
				u += "&next=" + url.QueryEscape(next)
			}
			r := apiDo(c, http.MethodGet, u, tok, nil)
			var m struct {
				Documents []struct {
					Path string `json:"path"`
				} `json:"documents"`
				Next string `json:"next"`
			}
			if r.status != http.StatusOK || json.Unmarshal(r.body, &m) != nil {
				return nil, false
			}
			for _, d := range m.Documents {
				if strings.HasPrefix(d.Path, "Scans/") {
					out[d.Path]++
				}
			}
			if next = m.Next; next == "" || len(m.Documents) == 0 {
				return out, true
			}
		}
		return nil, false
	}
	smtpCreated := func(i int) string {
		r := apiDo(c, http.MethodGet, sc.url(i)+"/metrics", "", nil)
		m := regexp.MustCompile(`quire_intake_files_total\{outcome="(created|repeated)",profile="scan",source="SMTP"\} (\d+)`).FindAllStringSubmatch(string(r.body), -1)
		var parts []string
		for _, x := range m {
			parts = append(parts, x[1]+"="+x[2])
		}
		return strings.Join(parts, ",")
	}

	// Scan to e-mail through a follower.
	mail := []byte("From: scanner@office.test\r\nTo: scan@scans.test\r\nSubject: two pages\r\nMessage-ID: <failover-1@mfp>\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"B\"\r\n\r\n" +
		"--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"m1.pdf\"\r\n\r\n%PDF-1.4 mail one\r\n" +
		"--B\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"m2.pdf\"\r\n\r\n%PDF-1.4 mail two\r\n--B--\r\n")
	send := func(i int) {
		t.Helper()
		// The key is replicated to the follower soon after its 200.
		waitFor(t, fmt.Sprintf("the API key to authenticate on n%d", i+1), 30*time.Second, func() bool {
			r := apiDo(c, http.MethodGet, sc.url(i)+"/sites", key.APIKey, nil)
			return r.status == http.StatusOK
		})
		// In clear text on loopback (net/smtp's SendMail would try
		// STARTTLS with the self-signed certificate).
		err := func() error {
			cl, err := smtp.Dial(smtpAddrs[i])
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := cl.Auth(smtp.PlainAuth("", "apikey", key.APIKey, "127.0.0.1")); err != nil {
				return err
			}
			if err := cl.Mail("scanner@office.test"); err != nil {
				return err
			}
			if err := cl.Rcpt("scan@scans.test"); err != nil {
				return err
			}
			w, err := cl.Data()
			if err != nil {
				return err
			}
			if _, err := w.Write(mail); err != nil {
				return err
			}
			if err := w.Close(); err != nil {
				return err
			}
			return cl.Quit()
		}()
		if err != nil {
			t.Fatalf("mail to n%d: %v", i+1, err)
		}
	}
	send(F[0])
	for i := range 3 {
		var p map[string]int
		waitFor(t, fmt.Sprintf("the mail's documents on n%d", i+1), 30*time.Second, func() bool {
			p, _ = paths(i)
			return p["Scans/m1.pdf"] >= 1 && p["Scans/m2.pdf"] >= 1
		})
		if len(p) != 2 || p["Scans/m1.pdf"] != 1 || p["Scans/m2.pdf"] != 1 {
			t.Fatalf("n%d holds %v, want each attachment once", i+1, p)
		}
	}
	send(F[1]) // the same Message-ID through the other follower
	if got := smtpCreated(F[0]); got != "created=2" {
		t.Errorf("n%d (the follower that took the mail) counts %q, want created=2", F[0]+1, got)
	}
	if got := smtpCreated(F[1]); got != "repeated=2" {
		t.Errorf("n%d (the same mail again) counts %q, want repeated=2", F[1]+1, got)
	}
	if got := smtpCreated(L); got != "" {
		t.Errorf("the leader counts %q SMTP intakes; the followers took the mail", got)
	}
	if p, _ := paths(L); len(p) != 2 {
		t.Fatalf("after the mail sent again the leader holds %v, want the two attachments once", p)
	}

	// The watched folder: one file committed but not cleared (done/sub is
	// a plain file, so the move fails and the leader takes it again and
	// again, each time a repeat from the journal).
	dir := filepath.Join(root, "default", "scan")
	waitFor(t, "the watched folder", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "done"))
		return err == nil
	})
	if err := os.WriteFile(filepath.Join(dir, "done", "sub"), []byte("blocks done/sub/"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "stuck.pdf"), []byte("%PDF-1.4 committed, not moved"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "stuck.pdf's document", 30*time.Second, func() bool {
		p, _ := paths(F[0])
		return p["Scans/sub/stuck.pdf"] == 1
	})
	// A batch of larger files, each its own content, taken one after
	// another by the leader's poll.
	const n = 16
	names := []string{"sub/stuck.pdf"}
	for i := range n {
		name := fmt.Sprintf("big%02d.pdf", i)
		body := append([]byte(fmt.Sprintf("%%PDF-1.4 %s\n", name)), bytes.Repeat([]byte{byte(i), 0x5a, 0xa5, byte(i * 7)}, 128<<10)...)
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	// Writers on every member from here through the leader's kill and
	// its restart (the history at the end).
	var h history
	stop := h.write(sc.at, []int{0, 1, 2}, 15*time.Second, 20*time.Millisecond)
	defer stop()
	waitFor(t, "the first file of the batch through a follower", 60*time.Second, func() bool {
		p, _ := paths(F[0])
		for i := range n {
			if p[fmt.Sprintf("Scans/big%02d.pdf", i)] > 0 {
				return true
			}
		}
		return false
	})
	if _, err := os.Stat(filepath.Join(dir, "sub", "stuck.pdf")); err != nil {
		t.Fatalf("stuck.pdf left its folder before the kill: %v", err)
	}
	sc.procs[L].kill()
	left := 0
	for i := range n {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("big%02d.pdf", i))); err == nil {
			left++
		}
	}
	t.Logf("at the leader's SIGKILL %d of %d files of the batch were still in the folder", left, n)
	if err := os.Remove(filepath.Join(dir, "done", "sub")); err != nil {
		t.Fatal(err)
	}

	next := -1
	waitFor(t, "a new leader", 60*time.Second, func() bool {
		for _, i := range F {
			if st, ok := clusterStatusOf(c, sc.url(i), tok); ok && st.State == "Leader" {
				next = i
				return true
			}
		}
		return false
	})
	waitFor(t, "every file cleared from the watched folder", 60*time.Second, func() bool {
		for _, name := range names {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err == nil {
				return false
			}
		}
		return true
	})
	for _, i := range F {
		var p map[string]int
		waitFor(t, fmt.Sprintf("every file's document on n%d", i+1), 30*time.Second, func() bool {
			var ok bool
			p, ok = paths(i)
			if !ok {
				return false
			}
			for _, name := range names {
				if p["Scans/"+name] == 0 {
					return false
				}
			}
			return true
		})
		if len(p) != len(names)+2 {
			t.Errorf("n%d holds %d documents, want %d (the files and the mail's two)", i+1, len(p), len(names)+2)
		}
		for path, k := range p {
			if k != 1 {
				t.Errorf("n%d holds %s %d times, want once", i+1, path, k)
			}
		}
	}
	for _, name := range names {
		if _, err := os.Stat(filepath.Join(dir, "done", filepath.FromSlash(name))); err != nil {
			t.Errorf("%s is not in done/: %v", name, err)
		}
	}
	var done []string
	filepath.WalkDir(filepath.Join(dir, "done"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			done = append(done, p)
		}
		return nil
	})
	if len(done) != len(names) {
		t.Errorf("done/ holds %d files, want %d: %v", len(done), len(names), done)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "failed")); len(entries) != 0 {
		t.Errorf("failed/ holds %d entries, want none", len(entries))
	}
	t.Logf("n%d took over", next+1)

	// The old leader starts again and catches up; the history holds on
	// all three and the replicas are equal.
	sc.restart(t, L, fmt.Sprintf("n%d-again", L+1))
	h.waitAcked(t, "writes after the old leader's restart", 10, 30*time.Second)
	stop()
	bases := sc.bases()
	idx := settle(t, sc, bases, 60*time.Second)
	if p, ok := paths(L); !ok || len(p) != len(names)+2 {
		t.Errorf("the restarted n%d holds %d intake documents, want %d", L+1, len(p), len(names)+2)
	}
	count := h.check(t, sc, bases)
	rep := verifyEqual(t, sc.c, bases[0], sc.tok)
	t.Logf("settled at applied index %d; %s; replica digests equal at %d", idx, h.summary(count), rep.Index)
}
