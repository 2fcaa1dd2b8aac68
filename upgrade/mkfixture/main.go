// Command mkfixture writes the upgrade fixture (upgrade/testdata): it
// builds the pinned older commit from this repository's git history,
// runs that binary on a new data dir, stores the documents, users, keys
// and secrets of upgrade.Populate through its API, takes an online
// backup with it, stops it and packs the data dir and the backup into
// fixture.tar.gz beside manifest.json. `make upgrade-fixture` runs it
// with the commit pinned in the Makefile (UPGRADE_FROM).
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"quire/upgrade"
)

func main() {
	commit := flag.String("commit", "", "the older commit to build (required)")
	out := flag.String("out", "upgrade/testdata", "where fixture.tar.gz and manifest.json go")
	keep := flag.Bool("keep", false, "keep the work directory (its path is printed)")
	flag.Parse()
	if *commit == "" {
		fmt.Fprintln(os.Stderr, "mkfixture: -commit is required")
		os.Exit(2)
	}
	if err := run(*commit, *out, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "mkfixture:", err)
		os.Exit(1)
	}
}

func run(commit, out string, keep bool) error {
	full, err := exec.Command("git", "rev-parse", "--verify", commit+"^{commit}").Output()
	if err != nil {
		return fmt.Errorf("commit %s is not in this checkout's history (a shallow clone or a plain copy?): fetch it, e.g. git fetch --unshallow", commit)
	}
	commit = strings.TrimSpace(string(full))
	work, err := os.MkdirTemp("", "quire-upgrade-fixture-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}

	// The old tree, as committed, and its binary.
	src := filepath.Join(work, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	if b, err := exec.Command("sh", "-c", fmt.Sprintf("git archive %s | tar -x -C %q", commit, src)).CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v\n%s", commit, err, b)
	}
	oldVersion := "git-" + commit[:12]
	bin := filepath.Join(work, "quire-old")
	fmt.Println("building", commit, "...")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X quire/node.Version="+oldVersion, "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", commit, err, b)
	}

	// The old binary serves a new data dir.
	data := filepath.Join(work, "data")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	base := "http://" + addr
	logf, err := os.Create(filepath.Join(work, "serve.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	srv := exec.Command(bin, "serve", "--listen", addr, "--data-dir", data, "--public-url", base)
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer srv.Process.Kill()
	if err := waitReady(base, exited); err != nil {
		return err
	}
	tok, err := exec.Command(bin, "token", "--data-dir", data, "--user", "admin", "--groups", "Admins").Output()
	if err != nil {
		return fmt.Errorf("token: %w", err)
	}
	c := &upgrade.Client{Base: base, Token: strings.TrimSpace(string(tok))}
	m, err := upgrade.Populate(c, func(name, groups, password string) error {
		b, err := exec.Command(bin, "user", "add", name, "--groups", groups, "--password", password, "--url", base, "--data-dir", data).CombinedOutput()
		if err != nil {
			return fmt.Errorf("user add: %v\n%s", err, b)
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.Commit, m.OldVersion, m.Written = commit, oldVersion, time.Now().UTC().Format(time.RFC3339)
	m.Backup = "old-backup.quire"

	// The fulltext index has caught up before the backup and the stop.
	for deadline := time.Now().Add(time.Minute); ; {
		st, b, err := c.Do("POST", "/searchFulltext", map[string]any{"query": map[string]any{"text": m.Documents[0].Word}}, c.Token)
		if err == nil && st == 200 && bytes.Contains(b, []byte(m.Documents[0].ID)) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the old server's fulltext search does not find %s: %d %s %v", m.Documents[0].Word, st, b, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	backup := filepath.Join(work, m.Backup)
	if b, err := exec.Command(bin, "backup", "--url", base, "--token", c.Token, "--out", backup).CombinedOutput(); err != nil {
		return fmt.Errorf("backup: %v\n%s", err, b)
	}
	srv.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			return fmt.Errorf("the old server did not stop cleanly: %v", err)
		}
	case <-time.After(time.Minute):
		return errors.New("the old server did not stop in a minute")
	}

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := pack(filepath.Join(out, "fixture.tar.gz"), work, data, backup); err != nil {
		return err
	}
	mj, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "manifest.json"), append(mj, '\n'), 0o644); err != nil {
		return err
	}
	fi, _ := os.Stat(filepath.Join(out, "fixture.tar.gz"))
	fmt.Printf("wrote %s (%d bytes) and manifest.json: data dir and backup of %s\n", filepath.Join(out, "fixture.tar.gz"), fi.Size(), oldVersion)
	return nil
}

// skip are data dir files the fixture leaves out: the free-space ballast
// (sparse, recreated at start), the lock, scratch files and the log.
func skip(rel string) bool {
	switch filepath.ToSlash(rel) {
	case "data/db/QUIRE-RESERVE", "data/db/LOCK", "data/quire.log":
		return true
	}
	return strings.HasPrefix(filepath.ToSlash(rel), "data/tmp/")
}

// pack writes data (as data/) and backup into a tar.gz at path, in name
// order with fixed times, so that rewriting it changes only what changed.
func pack(path, work, data, backup string) error {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	tw := tar.NewWriter(gz)
	epoch := time.Unix(0, 0)
	add := func(p string, d fs.DirEntry) error {
		rel, err := filepath.Rel(work, p)
		if err != nil || skip(rel) {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(fi.Mode().Perm()), ModTime: epoch, Format: tar.FormatPAX}
		if d.IsDir() {
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
			return tw.WriteHeader(hdr)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, fi.Size()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	}
	if err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return add(p, d)
	}); err != nil {
		return err
	}
	fi, err := os.Lstat(backup)
	if err != nil {
		return err
	}
	if err := add(backup, fs.FileInfoToDirEntry(fi)); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func waitReady(base string, exited chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the old server exited: %v", err)
		case <-ctx.Done():
			return errors.New("the old server was not ready in a minute")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
