package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"quire/config"
	"quire/mapadvice"
	"quire/node"
	"quire/storage"
)

// doctorReport collects check results: ok, warnings (something will not
// work, e.g. OCR without tesseract) and failures (the server cannot run
// properly).
type doctorReport struct {
	w            io.Writer
	warns, fails int
}

func (d *doctorReport) ok(what, detail string) { fmt.Fprintf(d.w, "ok    %-10s %s\n", what, detail) }
func (d *doctorReport) warn(what, detail, fix string) {
	d.warns++
	fmt.Fprintf(d.w, "WARN  %-10s %s\n", what, detail)
	if fix != "" {
		fmt.Fprintf(d.w, "      %-10s fix: %s\n", "", fix)
	}
}
func (d *doctorReport) fail(what, detail, fix string) {
	d.fails++
	fmt.Fprintf(d.w, "FAIL  %-10s %s\n", what, detail)
	if fix != "" {
		fmt.Fprintf(d.w, "      %-10s fix: %s\n", "", fix)
	}
}

// cmdDoctor checks an installation and prints what to fix: the config,
// the data dir, free disk, the store, the running server, the engines,
// the clock and the TLS certificate. It exits 1 when something fails.
func cmdDoctor(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	l, err := config.Load(fs, args, config.Options{Flags: []string{"data-dir", "listen"}})
	d := &doctorReport{w: stdout}
	var ps config.Problems
	switch {
	case errors.As(err, &ps):
		for _, p := range ps {
			d.fail("config", p.String(), "edit the setting named (quire config example shows every setting)")
		}
	case err != nil:
		return err
	default:
		src := l.File
		if src == "" {
			src = "no config file (defaults, QUIRE_* variables and flags)"
		}
		d.ok("config", src)
	}
	if l == nil {
		return errors.New("doctor: configuration could not be read")
	}
	for _, p := range l.CheckFiles() {
		d.fail("config", p.String(), "")
	}
	for _, w := range l.Warnings() {
		d.warn("config", w.String(), "")
	}
	dataDir, _ := filepath.Abs(l.DataDir)
	serverUp := doctorServer(d, l)
	doctorClock(d, dataDir) // before the store is opened (which writes to it)
	nc := nodeConfig(l.Config, nil)
	doctorDataDir(d, dataDir, serverUp, storage.Config{MinFreeBytes: nc.MinFreeBytes, MinFreePercent: nc.MinFreePercent})
	doctorTLS(d, l, dataDir)
	doctorIntake(d, l.Intake.FolderRoot)
	doctorSMTP(d, l.IntakeSMTP.Listen, serverUp)
	doctorSMTPTLS(d, l, dataDir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, e := range nc.Pipeline.Engines.Check(ctx) {
		switch {
		case e.OK:
			d.ok(e.Name, e.Detail)
		case !e.Configured:
			fmt.Fprintf(stdout, "-     %-10s %s\n", e.Name, e.Detail)
		default:
			d.warn(e.Name, e.Detail, e.Actions+" actions fail until this is fixed")
		}
	}
	fmt.Fprintf(stdout, "\n%d failed, %d warnings\n", d.fails, d.warns)
	if d.fails > 0 {
		return fmt.Errorf("doctor found %d problems to fix", d.fails)
	}
	return nil
}

// doctorServer asks a server on the configured address whether it is
// ready; it reports whether one answered.
func doctorServer(d *doctorReport, l *config.Loaded) bool {
	// Ask the listener itself: the public URL may be a reverse proxy.
	scheme := "http://"
	if l.TLS.Enabled() {
		scheme = "https://"
	}
	base := scheme + l.Listen
	base = strings.Replace(base, "://0.0.0.0:", "://127.0.0.1:", 1)
	base = strings.Replace(base, "://[::]:", "://127.0.0.1:", 1)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Get(base + "/readyz")
	if err != nil {
		fmt.Fprintf(d.w, "-     %-10s no server answers at %s (stopped?)\n", "server", base)
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	var ready struct {
		Writes struct {
			Ready  *bool  `json:"ready"`
			Kind   string `json:"kind"`
			Reason string `json:"reason"`
		} `json:"writes"`
		Cluster struct {
			State  string `json:"state"`
			Reason string `json:"reason"`
		} `json:"cluster"`
	}
	json.Unmarshal(b, &ready)
	if ready.Cluster.State == "Unreadable" {
		d.fail("cluster", fmt.Sprintf("%s: %s", base, ready.Cluster.Reason),
			fmt.Sprintf("check the disk, then: quire cluster rejoin --data-dir %s --url https://<another member> and restart the service (its store and certificate are kept; the broken Raft files are moved aside)", l.DataDir))
		return true
	}
	if w := ready.Writes; w.Ready != nil && !*w.Ready {
		fix := "free or add space on the data disk: writes resume by themselves within seconds"
		if w.Kind == storage.KindIOError {
			fix = "a write to the disk failed: check it (dmesg, smartctl), then restart the service; writes stay refused until then"
		}
		d.fail("writes", fmt.Sprintf("%s refuses writes (%s): %s", base, w.Kind, w.Reason), fix)
	}
	if resp.StatusCode == http.StatusOK {
		d.ok("server", base+" is ready")
	} else {
		d.warn("server", fmt.Sprintf("%s answers %s: %s", base, resp.Status, strings.TrimSpace(string(b))), "the search index or the action pipeline is behind or stopped: see the log")
	}
	return true
}

func doctorDataDir(d *doctorReport, dir string, serverUp bool, res storage.Config) {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		d.warn("data dir", dir+" does not exist yet", "it is created at the first start; check its parent is writable")
		doctorDisk(d, filepath.Dir(dir), res)
		return
	}
	if err != nil || !fi.IsDir() {
		d.fail("data dir", fmt.Sprintf("%s is not a usable directory: %v", dir, err), "point data_dir at a directory")
		return
	}
	probe := filepath.Join(dir, ".doctor-probe")
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = f.Write([]byte("probe"))
		if err == nil {
			err = f.Sync()
		}
		f.Close()
		os.Remove(probe)
	}
	if err != nil {
		fix := "run doctor as the service user (sudo -u quire quire doctor ...) or fix the owner: chown -R quire:quire " + dir
		if runtime.GOOS == "windows" {
			fix = "run doctor from an elevated prompt (the data dir is SYSTEM's and Administrators' only)"
		}
		d.fail("data dir", fmt.Sprintf("%s is not writable: %v", dir, err), fix)
	} else if runtime.GOOS != "windows" && fi.Mode().Perm()&0o007 != 0 {
		d.warn("data dir", fmt.Sprintf("%s is readable by every user (%v)", dir, fi.Mode().Perm()), "chmod 750 "+dir)
	} else if others, aerr := foreignAccess(dir); aerr != nil || len(others) > 0 {
		d.warn("data dir", fmt.Sprintf("%s lets others than SYSTEM and Administrators in: %v %v", dir, others, aerr),
			`icacls "`+dir+`" /inheritance:r /grant:r SYSTEM:(OI)(CI)F Administrators:(OI)(CI)F`)
	} else if runtime.GOOS == "windows" {
		d.ok("data dir", dir+" is writable, by SYSTEM and Administrators only")
	} else {
		d.ok("data dir", dir+" is writable")
	}
	doctorDisk(d, dir, res)
	doctorReadahead(d, dir)
	if serverUp {
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "db", "MANIFEST")); err != nil {
		return // no store yet: never create one here
	}
	if err := storage.CheckFormat(filepath.Join(dir, "db")); err != nil {
		d.fail("store", err.Error(), "run the release that wrote it (or a newer one), or roll back with a backup: README, \"Upgrading and rolling back\"")
		return
	}
	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db"), Logger: newLogger(io.Discard, "error", "text")})
	if err != nil {
		d.fail("store", fmt.Sprintf("cannot open %s: %v", filepath.Join(dir, "db"), err), "if a server runs on this data dir, doctor cannot open it; otherwise restore the last backup")
		return
	}
	n, err := db.CountDocs()
	doctorCertificates(d, db, time.Now())
	db.Close()
	if err != nil {
		d.fail("store", err.Error(), "restore the last backup")
		return
	}
	d.ok("store", fmt.Sprintf("opens, %d documents", n))
}

// doctorIntake checks the scanner intake's watched folders: the root and
// every <root>/<site>/<profile> with its done/ and failed/ must be
// writable by the server's user (the poller moves files there).
func doctorIntake(d *doctorReport, root string) {
	if root == "" {
		fmt.Fprintf(d.w, "-     %-10s no intake.folder_root: watched folders are off\n", "intake")
		return
	}
	fi, err := os.Stat(root)
	if errors.Is(err, os.ErrNotExist) {
		d.warn("intake", root+" does not exist yet", "it is created at the first poll of a watched folder; check its parent is writable, or create it: mkdir -p "+root)
		return
	}
	if err != nil || !fi.IsDir() {
		d.fail("intake", fmt.Sprintf("intake.folder_root %s is not a usable directory: %v", root, err), "point intake.folder_root at a directory")
		return
	}
	dirs, n := []string{root}, 0
	sites, _ := os.ReadDir(root)
	for _, s := range sites {
		if !s.IsDir() {
			continue
		}
		profiles, _ := os.ReadDir(filepath.Join(root, s.Name()))
		for _, p := range profiles {
			if !p.IsDir() {
				continue
			}
			pd := filepath.Join(root, s.Name(), p.Name())
			dirs, n = append(dirs, pd), n+1
			for _, sub := range []string{"done", "failed"} {
				if _, err := os.Stat(filepath.Join(pd, sub)); err == nil {
					dirs = append(dirs, filepath.Join(pd, sub))
				}
			}
		}
	}
	bad := 0
	for _, dir := range dirs {
		if err := probeWrite(dir); err != nil {
			bad++
			d.fail("intake", fmt.Sprintf("%s is not writable: %v", dir, err),
				"run doctor as the service user (sudo -u quire quire doctor ...) and give it the folder: chown -R quire "+dir+" (the share's users need write access too)")
		}
	}
	if bad == 0 {
		d.ok("intake", fmt.Sprintf("%s and its %d watched folders (with done/, failed/) are writable", root, n))
	}
}

// doctorSMTP checks scan to e-mail's port: free to listen on, or taken by
// the running server's own SMTP listener (it answers with a 220 greeting).
func doctorSMTP(d *doctorReport, listen string, serverUp bool) {
	if listen == "" {
		fmt.Fprintf(d.w, "-     %-10s no intake_smtp.listen: scan to e-mail is off\n", "smtp")
		return
	}
	ln, err := net.Listen("tcp", listen)
	if err == nil {
		ln.Close()
		d.ok("smtp", listen+" is free for the scan-to-e-mail listener")
		return
	}
	banner := smtpGreeting(listen)
	if serverUp && strings.HasPrefix(banner, "220 ") {
		d.ok("smtp", fmt.Sprintf("%s answers SMTP (the running server's listener: %s)", listen, banner))
		return
	}
	detail := fmt.Sprintf("intake_smtp.listen %s cannot be listened on: %v", listen, err)
	if banner != "" {
		detail += fmt.Sprintf(" (it answers %q)", banner)
	}
	d.fail("smtp", detail, "stop the program on that port (ss -ltnp), or set intake_smtp.listen to a free port such as 0.0.0.0:2525; a port below 1024 needs CAP_NET_BIND_SERVICE")
}

// doctorSMTPTLS says which certificate the scan-to-e-mail listener offers
// for STARTTLS, with its SHA-256 fingerprint (scanners that pin take it),
// and fails when the configured one cannot be read: a LAN scanner may sign
// in only after STARTTLS, so without a certificate it could never send.
func doctorSMTPTLS(d *doctorReport, l *config.Loaded, dataDir string) {
	if l.IntakeSMTP.Listen == "" {
		return
	}
	var cert, source string
	switch {
	case l.IntakeSMTP.CertFile != "":
		cert, source = l.IntakeSMTP.CertFile, "intake_smtp.cert_file"
	case l.TLS.CertFile != "":
		cert, source = l.TLS.CertFile, "the server's tls.cert_file"
	default:
		cert, source = node.SelfSignedCertFile(dataDir), "self-signed, in the data dir"
		if _, err := os.Stat(cert); err != nil {
			d.ok("smtp tls", "STARTTLS with a self-signed certificate made at the first start (its fingerprint is in the log)")
			return
		}
	}
	b, err := os.ReadFile(cert)
	if err != nil {
		d.fail("smtp tls", fmt.Sprintf("STARTTLS certificate (%s): %v: scanners on the LAN cannot sign in", source, err),
			"fix the path, or leave intake_smtp.cert_file and tls.cert_file empty for a self-signed one")
		return
	}
	certs, err := parseCerts(b)
	if err != nil || len(certs) == 0 {
		d.fail("smtp tls", fmt.Sprintf("%s (%s) holds no certificate: %v", cert, source, err), "")
		return
	}
	sum := sha256.Sum256(certs[0].Raw)
	d.ok("smtp tls", fmt.Sprintf("STARTTLS with %s (%s), valid until %s, SHA-256 %s", cert, source,
		certs[0].NotAfter.Format("2006-01-02"), hex.EncodeToString(sum[:])))
}

// smtpGreeting is the first line a listener at addr sends within 3 s
// ("" when none).
func smtpGreeting(addr string) string {
	if h, p, err := net.SplitHostPort(addr); err == nil && (h == "" || h == "0.0.0.0" || h == "::") {
		addr = net.JoinHostPort("127.0.0.1", p)
	}
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	line, _ := bufio.NewReader(io.LimitReader(c, 512)).ReadString('\n')
	return strings.TrimSpace(line)
}

// probeWrite creates, syncs and removes a file in dir.
func probeWrite(dir string) error {
	probe := filepath.Join(dir, ".doctor-probe")
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("probe"))
	if err == nil {
		err = f.Sync()
	}
	f.Close()
	if rerr := os.Remove(probe); err == nil {
		err = rerr
	}
	return err
}

// doctorDisk checks the free space of the file system holding dir (or its
// nearest existing parent) against the reserve res sets.
func doctorDisk(d *doctorReport, dir string, res storage.Config) {
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	if free, total, err := storage.DiskFree(dir); err == nil && total > 0 {
		pct := float64(free) * 100 / float64(total)
		reserve := storage.Reserve(res, total)
		msg := fmt.Sprintf("%.1f GiB free of %.1f GiB (%.0f%%), %.1f GiB kept in reserve", float64(free)/(1<<30), float64(total)/(1<<30), pct, float64(reserve)/(1<<30))
		switch {
		case free < reserve:
			d.fail("disk", msg, "free space or move the data dir: under the reserve (storage.min_free_bytes / min_free_percent) every write gets 507")
		case free < 2*reserve || free < 5<<30 || pct < 10:
			d.warn("disk", msg, "plan more space; see quire_storage_vlog_bytes for growth")
		default:
			d.ok("disk", msg)
		}
	}
}

// doctorReadahead checks the data disk's readahead window: the kernel
// reads that much around every page fault on the store's tables and the
// index's segments, and a large window fills a small box's page cache
// with what no query asked for (storage/DESIGN.md, "Read-around").
func doctorReadahead(d *doctorReport, dir string) {
	kib, dev, ok := mapadvice.Readahead(dir)
	if !ok {
		return // no block device to ask (tmpfs, another OS)
	}
	msg := fmt.Sprintf("the data disk %s reads ahead %d KiB around every page fault", dev, kib)
	if kib <= mapadvice.RandomAboveKiB {
		d.ok("readahead", msg)
		return
	}
	d.warn("readahead", msg+"; with little memory the search index's pages push each other out (Quire advises its tables random access itself)",
		fmt.Sprintf("set 128 KiB: echo 128 > /sys/block/%s/queue/read_ahead_kb, and keep it with a udev rule (README, \"Installing on a server\")", dev))
}

// doctorClock checks the clock: tokens, signed URLs and dates depend on it.
func doctorClock(d *doctorReport, dataDir string) {
	now := time.Now()
	if now.Year() < 2024 {
		d.fail("clock", "the system clock says "+now.Format(time.RFC3339), "set the time (timedatectl set-time, or an NTP server on the LAN)")
		return
	}
	// A clock behind the newest write means it was set back: new
	// documents would sort before old ones and tokens look unissued.
	var newest time.Time
	filepath.WalkDir(filepath.Join(dataDir, "db"), func(_ string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
				newest = fi.ModTime()
			}
		}
		return nil
	})
	if newest.Sub(now) > 5*time.Minute {
		d.fail("clock", fmt.Sprintf("the clock (%s) is behind the newest write to the store (%s)", now.Format(time.RFC3339), newest.Format(time.RFC3339)), "set the correct time before starting the server")
		return
	}
	if out, err := exec.Command("timedatectl", "show", "-p", "NTPSynchronized", "--value").Output(); err == nil {
		if strings.TrimSpace(string(out)) != "yes" {
			d.warn("clock", now.Format(time.RFC3339)+", not synchronized by NTP", "point systemd-timesyncd or chrony at an NTP server on the LAN")
			return
		}
		d.ok("clock", now.Format(time.RFC3339)+", NTP synchronized")
		return
	}
	d.ok("clock", now.Format(time.RFC3339))
}

func doctorTLS(d *doctorReport, l *config.Loaded, dataDir string) {
	cert := l.TLS.CertFile
	if l.TLS.SelfSigned {
		cert = filepath.Join(dataDir, "tls", "cert.pem")
		if _, err := os.Stat(cert); err != nil {
			d.ok("tls", "self-signed certificate is generated at the first start")
			return
		}
	}
	if cert == "" {
		if h := l.Listen; !strings.HasPrefix(h, "127.") && !strings.HasPrefix(h, "localhost:") && !strings.HasPrefix(h, "[::1]:") {
			d.warn("tls", "serving plain HTTP on "+h+": tokens cross the LAN unencrypted", "set tls.cert_file and tls.key_file, or tls.self_signed = true")
		}
		return
	}
	b, err := os.ReadFile(cert)
	if err != nil {
		d.fail("tls", err.Error(), "")
		return
	}
	certs, err := parseCerts(b)
	if err != nil || len(certs) == 0 {
		d.fail("tls", fmt.Sprintf("%s holds no certificate: %v", cert, err), "")
		return
	}
	left := time.Until(certs[0].NotAfter)
	msg := fmt.Sprintf("%s valid until %s", cert, certs[0].NotAfter.Format("2006-01-02"))
	switch {
	case left < 0:
		d.fail("tls", msg+" (expired)", "renew the certificate (a self-signed one renews itself at the next start)")
	case left < 30*24*time.Hour:
		d.warn("tls", msg, "renew the certificate soon")
	default:
		d.ok("tls", msg)
	}
}

func parseCerts(b []byte) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return out, nil
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
}

// doctorCertificates warns of certificates in the sites' secrets stores
// that expire within 30 days or have expired (the metric
// quire_certificate_expiry_timestamp_seconds shows them while the server
// runs).
func doctorCertificates(d *doctorReport, db *storage.DB, now time.Time) {
	all, err := db.AllSecrets()
	if err != nil {
		return
	}
	for site, secs := range all {
		for _, s := range secs {
			what := fmt.Sprintf("certificate %s of site %s (%s)", s.Alias, site, s.Subject)
			switch left := s.NotAfter.Sub(now); {
			case left <= 0:
				d.warn("secrets", what+" expired on "+s.NotAfter.Format("2006-01-02"), "quire secrets add a renewed certificate and delete this one")
			case left < 30*24*time.Hour:
				d.warn("secrets", fmt.Sprintf("%s expires in %d days", what, int(left.Hours()/24)), "renew it before then")
			}
		}
	}
}
