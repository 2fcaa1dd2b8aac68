package upgrade_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"quire/quiretest"
)

// buildDeb builds the .deb of bin as `make package` does (packaging/nfpm.yaml,
// the nfpm the Makefile pins, the config of `quire config example`), with
// version, in a staging directory of its own, and returns its path.
func buildDeb(t *testing.T, bin, version string) string {
	t.Helper()
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NFPM := (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile names no NFPM")
	}
	stage := t.TempDir()
	for _, d := range []string{"packaging", "systemd"} {
		if out, err := exec.Command("cp", "-r", filepath.Join("..", d), stage).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", d, err, out)
		}
	}
	pkg := filepath.Join(stage, "build", "pkg")
	for _, d := range []string{pkg, filepath.Join(stage, "out")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := exec.Command("cp", bin, filepath.Join(pkg, "quire")).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	conf, err := exec.Command(bin, "config", "example", "--data-dir", "/var/lib/quire", "--log-format", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "quire.toml"), conf, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", string(m[1]), "package", "-f", "packaging/nfpm.yaml", "-p", "deb", "-t", "out/")
	cmd.Dir = stage
	cmd.Env = append(os.Environ(), "ARCH=amd64", "PKG_VERSION="+version)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nfpm: %v\n%s", err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(stage, "out", "*.deb"))
	if len(debs) != 1 {
		t.Fatalf("nfpm made %v", debs)
	}
	return debs[0]
}

// newRoot makes a directory dpkg can install into with --root: its
// database, /dev/null, and the programs the maintainer scripts run (dpkg
// runs them chrooted into the root) with their libraries, and a copy of
// this machine's user and group files, so that the package's user is
// created in the root only.
func newRoot(t *testing.T) string {
	t.Helper()
	r := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "etc", "tmp", "dev"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"var/lib/dpkg/status", "var/lib/dpkg/available"} {
		if err := os.WriteFile(filepath.Join(r, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mknod(filepath.Join(r, "dev", "null"), syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Fatalf("mknod /dev/null in the root: %v", err)
	}
	copyFile := func(src, dst string) {
		t.Helper()
		if _, err := os.Stat(dst); err == nil {
			return
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-L", "-p", src, dst).CombinedOutput(); err != nil {
			t.Fatalf("cp %s: %v\n%s", src, err, out)
		}
	}
	libRE := regexp.MustCompile(`(/[^ \t]+\.so[^ \t]*)`)
	for _, prog := range []string{"sh", "id", "useradd", "mkdir", "chown", "chmod", "cat", "rm", "nologin"} {
		p, err := exec.LookPath(prog)
		if err != nil {
			for _, d := range []string{"/usr/sbin", "/sbin"} {
				if _, serr := os.Stat(filepath.Join(d, prog)); serr == nil {
					p, err = filepath.Join(d, prog), nil
				}
			}
		}
		if err != nil {
			t.Fatalf("%s, which the package's scripts run, is not on this machine", prog)
		}
		// Where the scripts look for it: /bin and /usr/bin are one on a
		// merged-/usr system, so both get it.
		for _, d := range []string{filepath.Dir(p), "/bin", "/usr/bin", "/usr/sbin"} {
			copyFile(p, filepath.Join(r, d, prog))
		}
		out, _ := exec.Command("ldd", p).Output()
		for _, l := range libRE.FindAllString(string(out), -1) {
			copyFile(l, filepath.Join(r, l))
		}
	}
	for _, f := range []string{"passwd", "group", "shadow", "gshadow", "login.defs"} {
		if _, err := os.Stat("/etc/" + f); err == nil {
			copyFile("/etc/"+f, filepath.Join(r, "etc", f))
		}
	}
	return r
}

// dpkg runs dpkg on root r.
func dpkg(t *testing.T, r string, args ...string) string {
	t.Helper()
	out, err := exec.Command("dpkg", append([]string{"--root=" + r, "--force-confold"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// uidIn is the uid and gid of user in root r's /etc/passwd.
func uidIn(t *testing.T, r, user string) (int, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r, "etc", "passwd"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) > 3 && f[0] == user {
			u, _ := strconv.Atoi(f[2])
			g, _ := strconv.Atoi(f[3])
			return u, g
		}
	}
	t.Fatalf("no user %s in the root's /etc/passwd", user)
	return 0, 0
}

func owner(t *testing.T, p string) (os.FileMode, int, int) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fi.Mode().Perm(), int(st.Uid), int(st.Gid)
}

// TestUpgrade_Deb installs an older .deb with dpkg into a temporary root,
// puts in the data the pinned older release wrote and a local edit of the
// config, writes a document with the installed server, installs the
// current .deb over it, and checks that the data dir (every file, its
// owner and mode), the edited config, the service user and the unit are
// kept, and that the upgraded server serves all of it. Removing and then
// purging the package keeps the documents.
//
// The older .deb is built from the current binary with a lower version
// (a package of the pinned commit would need its binary, built from git
// history CI may not have): it exercises the maintainer scripts' upgrade
// path, which are the same at the pinned commit; the old release's data
// comes from the fixture.
func TestUpgrade_Deb(t *testing.T) {
	if os.Geteuid() != 0 || exec.Command("dpkg", "--version").Run() != nil {
		quiretest.SkipUnlessCI(t, "not root or no dpkg: dpkg --root runs the package scripts chrooted, which needs root (CI runs the tests as root on Debian)")
	}
	m := readManifest(t)
	bin := buildCurrent(t)
	oldDeb := buildDeb(t, bin, "0.0.1~old")
	newDeb := buildDeb(t, bin, "0.0.2~new")
	r := newRoot(t)
	hostPasswd, _ := os.ReadFile("/etc/passwd")

	dpkg(t, r, "-i", oldDeb)
	uid, gid := uidIn(t, r, "quire")
	data := filepath.Join(r, "var", "lib", "quire")
	if mode, u, g := owner(t, data); mode != 0o750 || u != uid || g != gid {
		t.Fatalf("/var/lib/quire after the install: %v %d:%d, want 0750 quire (%d:%d)", mode, u, g, uid, gid)
	}

	// The old release's data dir, owned by the service user, and a local
	// edit of the config.
	fx := filepath.Join(extract(t), "data")
	if out, err := exec.Command("cp", "-a", fx+"/.", data).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	if err := os.Chmod(data, 0o750); err != nil { // cp -a took the fixture's mode
		t.Fatal(err)
	}
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), data).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	conf := filepath.Join(r, "etc", "quire", "quire.toml")
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "\n# local edit: kept across upgrades\n")
	f.Close()
	confBefore, _ := os.ReadFile(conf)

	// The installed (older) package's server writes a document.
	installed := filepath.Join(r, "usr", "bin", "quire")
	s := startServer(t, installed, data)
	tok := adminToken(t, installed, data)
	c := client(s.base)
	d := api(t, c, "POST", "/documents", tok, map[string]any{"path": "before/upgrade.txt", "contentType": "text/plain", "content": "written under the older package, pelicanrune"}, 201)
	between := str(d, "documentId")
	s.stop(t)
	if out, err := exec.Command("chown", "-R", fmt.Sprintf("%d:%d", uid, gid), data).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	before := snapshot(t, data)

	out := dpkg(t, r, "-i", newDeb)
	if !strings.Contains(out, "Unpacking quire (0.0.2~new-1) over (0.0.1~old-1)") {
		t.Fatalf("dpkg did not upgrade the package:\n%s", out)
	}
	if st := dpkg(t, r, "-s", "quire"); !strings.Contains(st, "Version: 0.0.2~new-1") || !strings.Contains(st, "Status: install ok installed") {
		t.Fatalf("dpkg -s after the upgrade:\n%s", st)
	}
	after := snapshot(t, data)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("the upgrade changed %s: %s -> %s", p, v, after[p])
		}
	}
	if len(after) != len(before) {
		t.Errorf("the upgrade changed the data dir's files: %d -> %d", len(before), len(after))
	}
	if u2, g2 := uidIn(t, r, "quire"); u2 != uid || g2 != gid {
		t.Errorf("the service user changed: %d:%d -> %d:%d", uid, gid, u2, g2)
	}
	if mode, u, g := owner(t, data); mode != 0o750 || u != uid || g != gid {
		t.Errorf("/var/lib/quire after the upgrade: %v %d:%d", mode, u, g)
	}
	if b, _ := os.ReadFile(conf); !bytes.Equal(b, confBefore) {
		t.Errorf("the upgrade replaced the edited config")
	}
	if mode, u, g := owner(t, conf); mode != 0o640 || u != 0 || g != gid {
		t.Errorf("/etc/quire/quire.toml after the upgrade: %v %d:%d, want 0640 root:quire", mode, u, g)
	}
	unit, _ := os.ReadFile(filepath.Join(r, "usr", "lib", "systemd", "system", "quire.service"))
	want, _ := os.ReadFile("../systemd/quire.service")
	if len(want) == 0 || !bytes.Equal(unit, want) {
		t.Errorf("the unit after the upgrade differs from systemd/quire.service:\n%s", unit)
	}
	if b, _ := os.ReadFile("/etc/passwd"); !bytes.Equal(b, hostPasswd) {
		t.Error("the package's scripts changed this machine's /etc/passwd, not the root's")
	}

	// The upgraded server serves the old release's data and the document
	// written under the older package.
	s = startServer(t, installed, data)
	tok = adminToken(t, installed, data)
	verify(t, s.base, tok, m)
	if got := api(t, client(s.base), "GET", "/documents/"+between+"/content", tok, nil, 200); str(got, "content") != "written under the older package, pelicanrune" {
		t.Errorf("the document written before the upgrade: %v", got)
	}
	s.stop(t)

	// Removing, then purging the package keeps the documents.
	dpkg(t, r, "-r", "quire")
	if _, err := os.Stat(installed); err == nil {
		t.Error("dpkg -r left /usr/bin/quire")
	}
	dpkg(t, r, "-P", "quire")
	if _, err := os.Stat(filepath.Join(data, "db", "MANIFEST")); err != nil {
		t.Errorf("the documents are gone after dpkg -P: %v", err)
	}
}
