package intake_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// lockedBuffer collects a process's output for a failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sambaShare starts a real smbd (Debian samba) on a loopback port with a
// generated smb.conf sharing dir as [scans] to guests, and returns the
// port. Run by root, smbd runs as nobody (the share is handed to nobody);
// otherwise as the test's user. It stops when the test ends.
func sambaShare(t *testing.T, dir string) int {
	t.Helper()
	smbd, err := exec.LookPath("smbd")
	if err != nil {
		smbd = "/usr/sbin/smbd" // not on a non-root PATH
		if _, err := os.Stat(smbd); err != nil {
			quiretest.SkipUnlessCI(t, "smbd not found: install the Debian package samba (make deps does)")
		}
	}
	state, err := os.MkdirTemp("", "quire-smbd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(state) })
	guest, uid, gid := "", -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			t.Fatalf("smbd as non-root: no user nobody: %v", err)
		}
		guest = u.Username
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	} else {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		guest = u.Username
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	var conf strings.Builder
	fmt.Fprintf(&conf, "[global]\n  netbios name = QUIRETEST\n  workgroup = WORKGROUP\n  server role = standalone server\n")
	fmt.Fprintf(&conf, "  smb ports = %d\n  interfaces = 127.0.0.1\n  bind interfaces only = yes\n  disable netbios = yes\n", port)
	for _, d := range []string{"lock directory", "state directory", "cache directory", "pid directory", "private dir", "ncalrpc dir"} {
		p := filepath.Join(state, strings.ReplaceAll(d, " ", "-"))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&conf, "  %s = %s\n", d, p)
	}
	fmt.Fprintf(&conf, "  log file = %s/log.%%m\n  passdb backend = tdbsam:%s/private-dir/passdb.tdb\n", state, state)
	fmt.Fprintf(&conf, "  map to guest = Bad User\n  guest account = %s\n  load printers = no\n  printing = bsd\n  printcap name = /dev/null\n  disable spoolss = yes\n  server min protocol = SMB2\n", guest)
	fmt.Fprintf(&conf, "[scans]\n  path = %s\n  read only = no\n  guest ok = yes\n  guest only = yes\n", dir)
	cfg := filepath.Join(state, "smb.conf")
	if err := os.WriteFile(cfg, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		// smbd as nobody: it owns its state and the share; the temporary
		// directories above them must let it through.
		for _, p := range []string{state, dir} {
			if err := filepath.Walk(p, func(q string, _ os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				return os.Chown(q, uid, gid)
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(state, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := &lockedBuffer{}
	cmd := exec.Command(smbd, "--foreground", "--no-process-group", "--debug-stdout", "-s", cfg)
	cmd.Dir, cmd.Stdout, cmd.Stderr = state, out, out
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start smbd: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return port
		}
		select {
		case <-exited:
			t.Fatalf("smbd exited: %s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("smbd does not listen on %d: %s", port, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestIntakeFolder_Samba: the watched folder shared by a real smbd, and
// smbclient putting files as a scanner does: one into a subfolder, one
// written over several seconds (put again as it grows, in one session). Each becomes one whole document.
func TestIntakeFolder_Samba(t *testing.T) {
	smbclient := quiretest.NeedProgram(t, "smbclient", "smbclient")
	root, err := os.MkdirTemp("", "quire-scans")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	share := filepath.Join(root, "default", "scan")
	if err := os.MkdirAll(share, 0o755); err != nil {
		t.Fatal(err)
	}
	port := sambaShare(t, share)
	s := quiretest.NewServer(t, intakeRoot(root))
	admin := s.Admin()
	servertest.AddIntakeProfile(t, s, admin, map[string]any{"name": "scan", "pathTemplate": "Scans/{folder}/{filename}", "actions": []any{},
		"watchFolder": map[string]any{"stableSeconds": 2}})

	local := t.TempDir()
	quick := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("quick "), 20000)...)
	if err := os.WriteFile(filepath.Join(local, "quick.pdf"), quick, 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(smbclient, "//127.0.0.1/scans", "-p", strconv.Itoa(port), "-N", "-c", "mkdir Invoices; cd Invoices; put "+filepath.Join(local, "quick.pdf")+" quick.pdf")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("smbclient put: %v: %s", err, out)
	}

	// The slow one: one smbclient session, the file growing by a piece
	// every 700 ms (shorter than stableSeconds) for about 4 s.
	slow := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("slow page "), 300000)...)
	part := filepath.Join(local, "slow.part.pdf")
	sess := exec.Command(smbclient, "//127.0.0.1/scans", "-p", strconv.Itoa(port), "-N")
	stdin, err := sess.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var sessOut lockedBuffer
	sess.Stdout, sess.Stderr = &sessOut, &sessOut
	if err := sess.Start(); err != nil {
		t.Fatal(err)
	}
	pieces := 6
	step := (len(slow) + pieces - 1) / pieces
	for i := 0; i < pieces; i++ {
		if err := os.WriteFile(part, slow[:min((i+1)*step, len(slow))], 0o644); err != nil {
			t.Fatal(err)
		}
		// A put of the file as it is so far (smbclient's reput, which
		// would append, loses every other piece in Samba 4.17).
		if _, err := fmt.Fprintf(stdin, "put %s slow.pdf\n", part); err != nil {
			t.Fatalf("smbclient session: %v: %s", err, sessOut.String())
		}
		if i == 2 {
			// Half way through, the folder holds a partial file the
			// server must not take.
			servertest.WaitFor(t, "the partial slow.pdf on the share", func() bool {
				fi, err := os.Stat(filepath.Join(share, "slow.pdf"))
				return err == nil && fi.Size() > 0
			})
		}
		time.Sleep(700 * time.Millisecond)
	}
	fmt.Fprintf(stdin, "quit\n")
	stdin.Close()
	if err := sess.Wait(); err != nil {
		t.Fatalf("smbclient session: %v: %s", err, sessOut.String())
	}
	if d := docsByPath(t, s, admin); len(d["Scans/slow.pdf"]) != 0 {
		// Possible only if the last piece landed 2 s before now: the
		// session above ends right after it.
		t.Logf("slow.pdf already taken at the end of the session")
	}

	servertest.WaitFor(t, "both files taken from the share", func() bool {
		d := docsByPath(t, s, admin)
		return len(d["Scans/Invoices/quick.pdf"]) == 1 && len(d["Scans/slow.pdf"]) == 1 &&
			exists(filepath.Join(share, "done", "slow.pdf")) && exists(filepath.Join(share, "done", "Invoices", "quick.pdf"))
	})
	d := docsByPath(t, s, admin)
	if len(d) != 2 {
		t.Errorf("documents %v, want the two files once each", d)
	}
	if got := servertest.Download(t, s, admin, "", d["Scans/slow.pdf"][0]); !bytes.Equal(got, slow) {
		t.Errorf("slow.pdf read back as %d bytes, want %d (taken before the scanner finished?)", len(got), len(slow))
	}
	if got := servertest.Download(t, s, admin, "", d["Scans/Invoices/quick.pdf"][0]); !bytes.Equal(got, quick) {
		t.Errorf("quick.pdf read back as %d bytes, want %d", len(got), len(quick))
	}
	m := s.Do(http.MethodGet, "/metrics", nil, "")
	if !strings.Contains(string(m.Body), `quire_intake_files_total{outcome="created",profile="scan",source="FOLDER"} 2`) {
		t.Errorf("metrics do not count two created files")
	}
}
