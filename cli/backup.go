package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"quire/backup"
	"quire/config"
	"quire/node"
	"quire/storage"
)

// cmdBackup writes a backup archive, online from a running server (--url)
// or offline from a stopped server's data dir.
//
//	quire backup --url http://127.0.0.1:8080 --token T --out FILE|-
//	quire backup --data-dir D --out FILE|-
func cmdBackup(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "base URL of a running server (online backup)")
	token := fs.String("token", "", "admin token for --url (or QUIRE_TOKEN)")
	caFile := fs.String("ca-file", "", "PEM certificate to trust for an https --url (e.g. <data>/tls/cert.pem of a self-signed server)")
	out := fs.String("out", "", "archive file to write, or - for stdout (required)")
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir"}})
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("backup: --out is required (a file, or - for stdout)")
	}
	w, commit, abort, err := openOut(*out, stdout)
	if err != nil {
		return err
	}
	start := time.Now()
	var info backup.Info
	if *url != "" {
		info, err = onlineBackup(*url, firstNonEmpty(*token, os.Getenv("QUIRE_TOKEN")), *caFile, w, stderr)
	} else {
		info, err = offlineBackup(l.DataDir, w, stderr)
	}
	if err == nil {
		err = commit()
	}
	if err != nil {
		abort()
		return fmt.Errorf("backup failed, no archive written: %w", err)
	}
	fmt.Fprintf(stderr, "backup complete: %d keys, %.1f MiB of store data, in %s\n",
		info.Keys, float64(info.StoreBytes)/(1<<20), time.Since(start).Round(time.Millisecond))
	return nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// openOut opens the archive destination. A file is written under a
// temporary name and renamed when complete, so an interrupted backup never
// leaves a file that looks like a backup.
func openOut(path string, stdout io.Writer) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "-" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	tmp := path + ".partial"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, nil, err
	}
	commit = func() error {
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	}
	abort = func() {
		f.Close()
		os.Remove(tmp)
	}
	return f, commit, abort, nil
}

// onlineBackup downloads an archive from a running server and checks it
// (structure and checksum) while writing it.
func onlineBackup(base, token, caFile string, w io.Writer, stderr io.Writer) (backup.Info, error) {
	if token == "" {
		return backup.Info{}, errors.New("--url needs an admin token: --token or QUIRE_TOKEN")
	}
	client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if caFile != "" {
		pemBytes, err := os.ReadFile(caFile)
		if err != nil {
			return backup.Info{}, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pemBytes) {
			return backup.Info{}, fmt.Errorf("%s holds no PEM certificate", caFile)
		}
		client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimRight(base, "/")+"/system/backup", nil)
	if err != nil {
		return backup.Info{}, err
	}
	req.Header.Set("Authorization", token)
	resp, err := client.Do(req)
	if err != nil {
		return backup.Info{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return backup.Info{}, fmt.Errorf("server answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	est, _ := strconv.ParseInt(resp.Header.Get("X-Quire-Backup-Estimate"), 10, 64)
	p := newProgress(stderr, "backup", est, true)
	defer p.done()
	return backup.Verify(io.TeeReader(resp.Body, w), p.set)
}

// offlineBackup writes an archive of a stopped server's data dir.
func offlineBackup(dataDir string, w io.Writer, stderr io.Writer) (backup.Info, error) {
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dataDir, "db"), Logger: newLogger(stderr, "warn", "text")})
	if err != nil {
		return backup.Info{}, fmt.Errorf("%w (is the server running? back it up online with --url)", err)
	}
	defer db.Close()
	p := newProgress(stderr, "backup", backup.Estimate(db), true)
	defer p.done()
	return backup.Write(w, db, dataDir, node.Version, p.set)
}
