// Package packaging holds the package definitions; this test builds the
// packages with `make package` and installs the .deb on this machine.
package packaging

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"quire/quiretest"
)

func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestPackages builds the .deb, .rpm and Windows zip, installs the .deb
// with dpkg, checks its files, user, permissions and unit, runs the
// installed server as the service user, and removes the package again
// (documents stay).
func TestPackages(t *testing.T) {
	if os.Geteuid() != 0 || exec.Command("dpkg", "--version").Run() != nil {
		quiretest.SkipUnlessCI(t, "not root or no dpkg: the package test installs a .deb (CI runs it as root on a Debian machine)")
	}
	if exec.Command("dpkg", "-s", "quire").Run() == nil {
		t.Fatal("a quire package is already installed on this machine; this test would replace it")
	}
	dist := t.TempDir()
	cmd := exec.Command("make", "-C", "..", "package", "ARCHES=amd64 arm64", "DIST="+dist, "PKG_VERSION=0.0.1~test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make package: %v\n%s", err, out)
	}
	deb := filepath.Join(dist, "quire_0.0.1~test-1_amd64.deb")
	rpm := filepath.Join(dist, "quire-0.0.1~test-1.x86_64.rpm")
	// arm64 packages too: the cross-compile CI must prove.
	if fi, err := os.Stat(filepath.Join(dist, "quire_0.0.1~test-1_arm64.deb")); err != nil || fi.Size() < 1<<20 {
		t.Fatalf("arm64 deb: %v", err)
	}
	zipPath := filepath.Join(dist, "quire_0.0.1-test_windows_amd64.zip")
	if b, err := os.ReadFile(rpm); err != nil || !bytes.HasPrefix(b, []byte{0xed, 0xab, 0xee, 0xdb}) {
		t.Fatalf("rpm: %v", err)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	zr.Close()
	if got := strings.Join(names, ","); got != "quire/quire.exe,quire/quire.toml,quire/README.txt,quire/grafana-dashboard.json,quire/alerts.yml" {
		t.Fatalf("zip holds %s", got)
	}
	info := sh(t, "dpkg-deb", "--info", deb)
	if !strings.Contains(info, "Package: quire") || !strings.Contains(info, "Architecture: amd64") || !strings.Contains(info, "Recommends: tesseract-ocr") {
		t.Fatalf("deb control:\n%s", info)
	}

	_, userExisted := exec.Command("id", "-u", "quire").Output()
	_, dataExisted := os.Stat("/var/lib/quire")
	t.Cleanup(func() {
		exec.Command("dpkg", "-P", "quire").Run()
		if dataExisted != nil {
			os.RemoveAll("/var/lib/quire")
		}
		if userExisted != nil {
			exec.Command("userdel", "quire").Run()
		}
	})
	sh(t, "dpkg", "-i", deb)

	unit, _ := os.ReadFile("/usr/lib/systemd/system/quire.service")
	want, _ := os.ReadFile("../systemd/quire.service")
	if len(want) == 0 || !bytes.Equal(unit, want) {
		t.Fatalf("installed unit differs from systemd/quire.service:\n%s", unit)
	}
	if v := sh(t, "/usr/bin/quire", "version"); !strings.HasPrefix(v, "quire ") {
		t.Fatalf("quire version: %q", v)
	}
	st := func(path string) (os.FileMode, string, string) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		s := fi.Sys().(*syscall.Stat_t)
		u := strings.TrimSpace(sh(t, "id", "-nu", fmt.Sprint(s.Uid)))
		g := strings.TrimSpace(sh(t, "getent", "group", fmt.Sprint(s.Gid)))
		return fi.Mode().Perm(), u, g[:strings.IndexByte(g, ':')]
	}
	if m, u, g := st("/var/lib/quire"); m != 0o750 || u != "quire" || g != "quire" {
		t.Fatalf("/var/lib/quire: %v %s:%s", m, u, g)
	}
	if m, u, g := st("/etc/quire/quire.toml"); m != 0o640 || u != "root" || g != "quire" {
		t.Fatalf("/etc/quire/quire.toml: %v %s:%s", m, u, g)
	}
	if out := sh(t, "runuser", "-u", "quire", "--", "/usr/bin/quire", "config", "check", "--config", "/etc/quire/quire.toml"); !strings.Contains(out, "config ok") {
		t.Fatalf("config check: %s", out)
	}

	// The installed server runs as the service user with the packaged
	// config (a free port instead of 8080).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := exec.CommandContext(ctx, "/usr/bin/quire", "serve", "--config", "/etc/quire/quire.toml", "--listen", addr)
	uid, _ := strconv.Atoi(strings.TrimSpace(sh(t, "id", "-u", "quire")))
	gid, _ := strconv.Atoi(strings.TrimSpace(sh(t, "id", "-g", "quire")))
	srv.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	srv.Dir = "/var/lib/quire"
	var logs bytes.Buffer
	srv.Stderr = &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	healthy := false
	for i := 0; i < 200 && !healthy; i++ {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			healthy = resp.StatusCode == http.StatusOK
		}
		time.Sleep(50 * time.Millisecond)
	}
	srv.Process.Signal(syscall.SIGTERM)
	werr := srv.Wait()
	if !healthy || werr != nil {
		t.Fatalf("installed server: healthy=%v exit=%v\n%s", healthy, werr, logs.String())
	}
	if _, err := os.Stat("/var/lib/quire/db"); err != nil {
		t.Fatalf("the service user could not create its store: %v", err)
	}

	sh(t, "dpkg", "-r", "quire")
	if _, err := os.Stat("/usr/bin/quire"); !os.IsNotExist(err) {
		t.Fatal("binary left after dpkg -r")
	}
	if _, err := os.Stat("/var/lib/quire/db"); err != nil {
		t.Fatal("removing the package deleted the documents")
	}
}
