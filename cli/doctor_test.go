package cli

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/mapadvice"
	"quire/quiretest"
	"quire/storage"
)

// TestDoctor runs quire doctor against healthy and broken installations
// and checks it names what to fix.
func TestDoctor(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o750)
	s := quiretest.StartServer(t, dir)
	tok := s.Admin()
	for i := 0; i < 3; i++ {
		if r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "x"}, tok); r.Status != http.StatusCreated {
			t.Fatal(r.Status)
		}
	}
	p12 := testP12(t, "Office Seal", time.Now().AddDate(0, 0, 10), "pw")
	if r := s.Do(http.MethodPost, "/sites/default/secrets", map[string]any{"alias": "seal", "data": base64.StdEncoding.EncodeToString(p12), "password": "pw"}, tok); r.Status != http.StatusCreated {
		t.Fatalf("secret: %d %s", r.Status, r.Body)
	}
	running := s.Node.Addr()
	badCfg := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(badCfg, []byte("[log]\nlevel = \"loud\"\n"), 0o600)
	hugeReserve := filepath.Join(t.TempDir(), "reserve.toml")
	os.WriteFile(hugeReserve, []byte("[storage]\nmin_free_bytes = 1000000000000000000\n"), 0o600)
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, []byte("x"), 0o600)
	future := t.TempDir()
	scans := t.TempDir()
	os.MkdirAll(filepath.Join(scans, "default", "finance", "done"), 0o755)
	os.MkdirAll(filepath.Join(scans, "default", "finance", "failed"), 0o755)
	intakeOK := filepath.Join(t.TempDir(), "intake.toml")
	os.WriteFile(intakeOK, []byte("[intake]\nfolder_root = \""+scans+"\"\n"), 0o600)
	busy, err := net.Listen("tcp", "127.0.0.1:0") // a program that is not an SMTP server
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	smtpBusy := filepath.Join(t.TempDir(), "smtpbusy.toml")
	os.WriteFile(smtpBusy, []byte("[intake_smtp]\nlisten = \""+busy.Addr().String()+"\"\n"), 0o600)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()
	smtpFree := filepath.Join(t.TempDir(), "smtpfree.toml")
	os.WriteFile(smtpFree, []byte("[intake_smtp]\nlisten = \""+freeAddr+"\"\n"), 0o600)
	smtpBadCert := filepath.Join(t.TempDir(), "smtpbadcert.toml")
	os.WriteFile(smtpBadCert, []byte("[intake_smtp]\nlisten = \""+freeAddr+"\"\ncert_file = \"/nonexistent/cert.pem\"\nkey_file = \"/nonexistent/key.pem\"\n"), 0o600)
	intakeFile := filepath.Join(t.TempDir(), "intakefile.toml")
	os.WriteFile(intakeFile, []byte("[intake]\nfolder_root = \""+notDir+"\"\n"), 0o600)
	tests := []struct {
		name  string
		setup func()
		args  []string
		code  int
		want  []string
	}{
		{"running server", nil, []string{"--data-dir", dir, "--listen", running}, 0,
			[]string{"ok    server     http://" + running + " is ready", "ok    data dir", " disk ", " clock ", "0 failed"}},
		{"disk under the reserve", nil, []string{"--config", hugeReserve, "--data-dir", dir, "--listen", running}, 1,
			[]string{"FAIL  disk", "kept in reserve", "every write gets 507"}},
		{"stopped server", func() { s.Close() }, []string{"--data-dir", dir, "--listen", "127.0.0.1:1"}, 0,
			[]string{"no server answers", "ok    store      opens, 3 documents", "WARN  secrets    certificate seal of site default (CN=Office Seal) expires in 9 days"}},
		{"intake folders writable", nil, []string{"--config", intakeOK, "--data-dir", dir, "--listen", running}, 0,
			[]string{"ok    intake     " + scans + " and its 1 watched folders (with done/, failed/) are writable"}},
		{"intake root is a file", nil, []string{"--config", intakeFile, "--data-dir", dir, "--listen", running}, 1,
			[]string{"FAIL  intake     intake.folder_root " + notDir + " is not a usable directory"}},
		{"smtp port free", nil, []string{"--config", smtpFree, "--data-dir", dir, "--listen", running}, 0,
			[]string{"ok    smtp       " + freeAddr + " is free for the scan-to-e-mail listener", "ok    smtp tls   STARTTLS with a self-signed certificate made at the first start"}},
		{"smtp certificate missing", nil, []string{"--config", smtpBadCert, "--data-dir", dir, "--listen", running}, 1,
			[]string{"FAIL  smtp tls", "scanners on the LAN cannot sign in"}},
		{"smtp port taken", nil, []string{"--config", smtpBusy, "--data-dir", dir, "--listen", running}, 1,
			[]string{"FAIL  smtp       intake_smtp.listen " + busy.Addr().String() + " cannot be listened on", "set intake_smtp.listen to a free port"}},
		{"bad config", nil, []string{"--config", badCfg, "--data-dir", dir}, 1,
			[]string{"FAIL  config     " + badCfg + ":2: log.level: want debug, info, warn or error", "1 failed"}},
		{"data dir is a file", nil, []string{"--data-dir", notDir, "--listen", "127.0.0.1:1"}, 1,
			[]string{"FAIL  data dir   " + notDir + " is not a usable directory"}},
		{"clock set back", func() {
			os.MkdirAll(filepath.Join(future, "db"), 0o700)
			f := filepath.Join(future, "db", "000001.vlog")
			os.WriteFile(f, []byte("x"), 0o600)
			later := time.Now().Add(2 * time.Hour)
			os.Chtimes(f, later, later)
		}, []string{"--data-dir", future, "--listen", "127.0.0.1:1"}, 1, []string{"FAIL  clock", "is behind the newest write"}},
		{"plain HTTP on the LAN", nil, []string{"--data-dir", dir, "--listen", "0.0.0.0:1"}, 0,
			[]string{"WARN  tls        serving plain HTTP on 0.0.0.0:1"}},
		{"data dir open to all", func() { os.Chmod(dir, 0o755) }, []string{"--data-dir", dir, "--listen", "127.0.0.1:1"}, 0,
			[]string{"WARN  data dir", "is readable by every user", "fix: chmod 750"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup()
			}
			var out, errb bytes.Buffer
			code := Main(append([]string{"doctor"}, tt.args...), &out, &errb)
			if code != tt.code {
				t.Fatalf("code %d, want %d\n%s%s", code, tt.code, out.String(), errb.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Fatalf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// TestDoctor_WritesRefused: doctor reports a running server that refuses
// writes after an I/O error, and says a restart is needed.
func TestDoctor_WritesRefused(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o750)
	s := quiretest.StartServer(t, dir)
	s.Node.DB.SetCommitFault(func(*storage.Command) error { return fmt.Errorf("sync: %w", syscall.EIO) })
	if r := s.Do(http.MethodPost, "/documents", map[string]any{"content": "x"}, s.Admin()); r.Status != http.StatusServiceUnavailable {
		t.Fatalf("write on a failing disk: %d %s", r.Status, r.Body)
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"doctor", "--data-dir", dir, "--listen", s.Node.Addr()}, &out, &errb); code != 1 {
		t.Fatalf("code %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	for _, w := range []string{"FAIL  writes", "refuses writes (io-error): storage failed: sync: input/output error", "then restart the service"} {
		if !strings.Contains(out.String(), w) {
			t.Fatalf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// The readahead line says what the data disk does and warns, with the
// command that fixes it, when the window is over what mapadvice takes
// for random reads. The disk is this machine's: each branch asserts its
// own outcome.
func TestDoctor_Readahead(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	d := &doctorReport{w: &out}
	doctorReadahead(d, dir)
	kib, dev, ok := mapadvice.Readahead(dir)
	got := out.String()
	switch {
	case !ok:
		if got != "" {
			t.Errorf("no block device, but doctor said %q", got)
		}
	case kib > mapadvice.RandomAboveKiB:
		if d.warns != 1 || !strings.Contains(got, fmt.Sprintf("reads ahead %d KiB", kib)) || !strings.Contains(got, "/sys/block/"+dev+"/queue/read_ahead_kb") {
			t.Errorf("readahead %d KiB on %s: want one warning with the fix, got %q", kib, dev, got)
		}
	default:
		if d.warns != 0 || !strings.HasPrefix(got, "ok") || !strings.Contains(got, fmt.Sprintf("%d KiB", kib)) {
			t.Errorf("readahead %d KiB on %s: want an ok line, got %q", kib, dev, got)
		}
	}
	t.Logf("%s", got)
}
