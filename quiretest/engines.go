package quiretest

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NeedProgram returns the path of an external program a test needs. When
// it is missing the test fails under CI=true (the Makefile installs it)
// and is skipped, saying what to install, elsewhere.
func NeedProgram(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	SkipUnlessCI(t, fmt.Sprintf("%s not found: install the Debian package %s (make deps does)", name, pkg))
	return ""
}

// SkipUnlessCI skips the test with msg, except under CI=true (which
// .ci/run sets), where what the test needs must be there: it fails.
func SkipUnlessCI(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Clamd starts a real clamd on a unix socket with a signature database
// that detects the EICAR test file, and returns its address for the
// pipeline ("unix:/path"). It stops when the test ends.
func Clamd(t testing.TB) string {
	t.Helper()
	bin := NeedProgram(t, "clamd", "clamav-daemon")
	dir, err := os.MkdirTemp("", "clamd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum([]byte(EICAR))
	sig := fmt.Sprintf("%s:%d:Eicar-Test-Signature\n", hex.EncodeToString(sum[:]), len(EICAR))
	if err := os.WriteFile(filepath.Join(db, "test.hdb"), []byte(sig), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "clamd.sock")
	conf := filepath.Join(dir, "clamd.conf")
	cfg := strings.Join([]string{
		"Foreground yes", "LocalSocket " + sock, "DatabaseDirectory " + db, "LogFile " + filepath.Join(dir, "clamd.log"),
		"PidFile " + filepath.Join(dir, "clamd.pid"), "StreamMaxLength 64M", "MaxThreads 4", "LogVerbose no",
	}, "\n") + "\n"
	if os.Geteuid() == 0 {
		cfg += "User root\n"
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config-file="+conf)
	out, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start clamd: %v", err)
	}
	errs := make(chan string, 1)
	go func() {
		var b strings.Builder
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		errs <- b.String()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for range 300 {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Write([]byte("zPING\x00"))
			r, _ := bufio.NewReader(c).ReadString(0)
			c.Close()
			if strings.HasPrefix(r, "PONG") {
				return "unix:" + sock
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Kill()
	log, _ := os.ReadFile(filepath.Join(dir, "clamd.log"))
	t.Fatalf("clamd did not start in 30s: %s %s", <-errs, log)
	return ""
}
