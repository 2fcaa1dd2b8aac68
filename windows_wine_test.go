package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
)

// TestWindows_ServiceUnderWine runs the Windows build (make package's
// quire.exe) under Wine (Debian's wine64, make deps installs it): `quire
// service install` registers it with Wine's service control manager,
// `net start` starts it, it serves the API (create, read, search, upload,
// download, an online backup), `net stop` stops it, `quire restore`
// restores the backup into another data dir the service then serves, and
// `quire service uninstall` removes it. The config names its paths with
// drive letters and backslashes, one with a space.
//
// What Wine does not prove is in packaging/windows/README.txt ("Tested
// under Wine").
func TestWindows_ServiceUnderWine(t *testing.T) {
	t.Parallel()
	wine := quiretest.NeedProgram(t, "wine", "wine")
	if _, err := os.Stat("/usr/lib/wine/wine64"); err != nil {
		quiretest.SkipUnlessCI(t, "no /usr/lib/wine/wine64: install the Debian package wine64 (make deps does)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	home := t.TempDir()
	prefix := filepath.Join(home, "prefix")
	env := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "HOME="+home, "WINEDLLOVERRIDES=mscoree,mshtml=")
	// drive maps a C:\ path into the prefix.
	drive := func(win string) string {
		return filepath.Join(prefix, "drive_c", filepath.FromSlash(strings.ReplaceAll(strings.TrimPrefix(win, `C:\`), `\`, "/")))
	}
	// wineRun runs wine with args for at most timeout. The output goes to
	// a file: Wine's server and services inherit it and outlive wine.
	wineRun := func(timeout time.Duration, args ...string) (string, error) {
		f, err := os.CreateTemp(home, "wine-out")
		if err != nil {
			return "", err
		}
		defer os.Remove(f.Name())
		defer f.Close()
		cmd := exec.Command(wine, args...)
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Start(); err != nil {
			return "", err
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(timeout):
			cmd.Process.Kill()
			<-done
			err = fmt.Errorf("wine %s: no answer in %s", strings.Join(args, " "), timeout)
		}
		return readFile(f.Name()), err
	}
	must := func(timeout time.Duration, args ...string) string {
		t.Helper()
		out, err := wineRun(timeout, args...)
		if err != nil {
			t.Fatalf("wine %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(filepath.Dir(wine), "wineserver"), "-k")
		cmd.Env = env
		cmd.Run()
	})

	// quire.exe is built while Wine makes its prefix (each waits on its
	// own work: together they took 10 and 19 s one after the other),
	// into the test's directory, and moved into the prefix once it is made.
	builtExe := filepath.Join(home, "quire.exe")
	var buildErr error
	built := make(chan struct{})
	go func() {
		defer close(built)
		build := exec.Command(gobin, "build", "-trimpath", "-o", builtExe, ".")
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build for windows/amd64: %v\n%s", err, out)
		}
	}()
	t.Cleanup(func() { <-built }) // before the test's directory is removed
	// A new prefix (Wine's C: drive and registry).
	must(5*time.Minute, "wineboot", "--init")
	// Wine's service manager gives a starting service 10 s to connect
	// (Windows gives 30 s) and then kills it: under a loaded CI machine a
	// cold start of quire.exe under Wine has taken longer. Wine reads the
	// timeout, as a string, from the registry when services.exe starts;
	// wineserver -w waits until this session (and its services.exe) has
	// ended, so the next one reads it.
	must(time.Minute, "reg", "add", `HKLM\System\CurrentControlSet\Control`, "/v", "ServicesPipeTimeout", "/t", "REG_SZ", "/d", "60000", "/f")
	wctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	waitWineserver := exec.CommandContext(wctx, filepath.Join(filepath.Dir(wine), "wineserver"), "-w")
	waitWineserver.Env = env
	out, err := waitWineserver.CombinedOutput()
	cancel()
	if err != nil {
		t.Fatalf("wineserver -w: %v\n%s", err, out)
	}
	// Go's runtime needs bcryptprimitives.dll's ProcessPrng, which Wine
	// 8.0 lacks (Windows has it since 8): a DLL of forwarders hands it to
	// advapi32's RtlGenRandom, which takes the same arguments.
	if err := os.WriteFile(drive(`C:\windows\system32\bcryptprimitives.dll`), forwarderDLL("bcryptprimitives.dll",
		map[string]string{"ProcessPrng": "advapi32.SystemFunction036"}), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := `C:\Program Files\Quire\quire.exe`
	if err := os.MkdirAll(filepath.Dir(drive(exe)), 0o755); err != nil {
		t.Fatal(err)
	}
	<-built
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if err := os.Rename(builtExe, drive(exe)); err != nil {
		t.Fatal(err)
	}
	if v := must(2*time.Minute, exe, "version"); !strings.HasPrefix(v, "quire ") {
		t.Fatalf("quire.exe version under Wine: %q", v)
	}

	// The services live while a process of the prefix does: a cmd that
	// waits for input keeps Wine's session (and its service manager) up.
	keeper := exec.Command(wine, "cmd")
	keeper.Env = env
	keepIn, err := keeper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// (no output: its pipes would be held by Wine's server.)
	if err := keeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { keepIn.Close(); keeper.Process.Kill(); keeper.Wait() })

	addr := quiretest.FreeLoopbackAddr(t)
	base := "http://" + addr
	cfg := `C:\ProgramData\Quire Service\quire.toml`
	dataDir := `C:\ProgramData\Quire Service\data`
	writeCfg := func(data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(drive(cfg)), 0o755); err != nil {
			t.Fatal(err)
		}
		c := fmt.Sprintf("listen = %q\ndata_dir = '%s'\npublic_url = %q\n", addr, data, base)
		if err := os.WriteFile(drive(cfg), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg(dataDir)
	must(2*time.Minute, exe, "config", "check", "--config", cfg)
	if out := must(2*time.Minute, exe, "service", "install", "--config", cfg); !strings.Contains(out, "installed the quire service") {
		t.Fatalf("service install: %s", out)
	}
	t.Cleanup(func() { wineRun(time.Minute, exe, "service", "uninstall", "--config", cfg) })
	// (Wine's sc has no qc: the service's registry key says the same.)
	if qc := must(time.Minute, "reg", "query", `HKLM\System\CurrentControlSet\Services\quire`, "/v", "ImagePath"); !strings.Contains(qc, `"C:\Program Files\Quire\quire.exe" service run --config "C:\ProgramData\Quire Service\quire.toml"`) {
		t.Fatalf("the registered service's command line:\n%s", qc)
	}

	client := &http.Client{Timeout: 30 * time.Second}
	ready := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			resp, err := client.Get(base + "/readyz")
			up := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				resp.Body.Close()
			}
			if up == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the service is not %s in 2 minutes (readyz: %v); its log:\n%s", map[bool]string{true: "serving", false: "stopped"}[want], err, quiretest.Tail(readFile(drive(dataDir+`\quire.log`)), 3000))
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
	state := func() string {
		out, _ := wineRun(time.Minute, "sc", "query", "quire")
		return out
	}
	startSvc := func() {
		t.Helper()
		// net start answers once the service reports running, or times
		// out under a slow Wine while it starts: readyz decides.
		out, err := wineRun(3*time.Minute, "net", "start", "quire")
		t.Logf("net start: %v\n%s", err, out)
		ready(true)
		if st := state(); !strings.Contains(st, "RUNNING") {
			t.Fatalf("net start (%v: %s): sc query says\n%s", err, out, st)
		}
	}
	stopSvc := func() {
		t.Helper()
		out, err := wineRun(3*time.Minute, "net", "stop", "quire")
		ready(false)
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(state(), "STOPPED") {
			if time.Now().After(deadline) {
				t.Fatalf("net stop (%v: %s): sc query says\n%s", err, out, state())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}

	// service install set the data dir's DACL to SYSTEM and Administrators
	// (SetNamedSecurityInfo; Wine accepts the call). doctor reads it back
	// through GetNamedSecurityInfo. Wine 8 keeps no DACLs: it answers one
	// made from the Unix mode bits (its user and Everyone), so doctor must
	// flag Everyone and give the icacls fix; a Wine that stored DACLs would
	// answer the one install set, and doctor would pass it.
	doc, _ := wineRun(3*time.Minute, exe, "doctor", "--config", cfg)
	stored := strings.Contains(doc, `Quire Service\data is writable, by SYSTEM and Administrators only`)
	flagged := strings.Contains(doc, "S-1-1-0") && strings.Contains(doc, `icacls "C:\ProgramData\Quire Service\data" /inheritance:r`)
	if !stored && !flagged {
		t.Fatalf("doctor after service install, on the data dir's permissions:\n%s", doc)
	}

	startSvc()
	tok := strings.TrimSpace(must(2*time.Minute, exe, "token", "--config", cfg, "--user", "admin", "--groups", "Admins"))
	// do sends a request with the admin token, wanting status want (0: any 2xx).
	do := func(method, url string, body io.Reader, want int) []byte {
		t.Helper()
		req, _ := http.NewRequest(method, url, body)
		req.Header.Set("Authorization", tok)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want && (want != 0 || resp.StatusCode/100 != 2) {
			t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
		}
		return b
	}
	field := func(b []byte, k string) string {
		var m map[string]any
		json.Unmarshal(b, &m)
		s, _ := m[k].(string)
		return s
	}
	id := field(do("POST", base+"/documents", strings.NewReader(`{"path":"letters/wine.txt","contentType":"text/plain","content":"served by a Windows service, okapilantern"}`), 201), "documentId")
	if c := field(do("GET", base+"/documents/"+id+"/content", nil, 200), "content"); c != "served by a Windows service, okapilantern" {
		t.Fatalf("content %q", c)
	}
	found := func(word, id string) bool {
		b := do("POST", base+"/searchFulltext", strings.NewReader(`{"query":{"text":"`+word+`"}}`), 200)
		return bytes.Contains(b, []byte(id))
	}
	for deadline := time.Now().Add(time.Minute); !found("okapilantern", id); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("fulltext search does not find the document in a minute")
		}
	}
	// An upload through the signed URL, in several chunks, and its download.
	big := bytes.Repeat([]byte("windows service upload 0123456789\n"), 70000)
	up := do("POST", base+"/documents/upload", strings.NewReader(`{"path":"scans/big.bin"}`), 0)
	do("PUT", field(up, "url"), bytes.NewReader(big), 0)
	bigID := field(up, "documentId")
	got := do("GET", field(do("GET", base+"/documents/"+bigID+"/url", nil, 200), "url"), nil, 200)
	if sha256.Sum256(got) != sha256.Sum256(big) {
		t.Fatalf("downloaded %d bytes, uploaded %d", len(got), len(big))
	}
	// An online backup to a drive-letter path.
	bk := `C:\Backups\quire backup.quire`
	if err := os.MkdirAll(filepath.Dir(drive(bk)), 0o755); err != nil {
		t.Fatal(err)
	}
	must(3*time.Minute, exe, "backup", "--url", base, "--token", tok, "--out", bk)
	// (quire backup checked the archive it received; the restore below
	// reads it back.)
	if fi, err := os.Stat(drive(bk)); err != nil || fi.Size() < 1024 {
		t.Fatalf("the backup: %v", err)
	}
	stopSvc()
	if log := readFile(drive(dataDir + `\quire.log`)); !strings.Contains(log, "quire serving") || !strings.Contains(log, `C:\\ProgramData\\Quire Service\\data`) {
		t.Fatalf("the service's log in the data dir:\n%s", quiretest.Tail(log, 3000))
	}

	// The backup restored into another data dir, which the service then serves.
	restored := `C:\ProgramData\Quire Service\restored`
	must(3*time.Minute, exe, "restore", "--in", bk, "--data-dir", restored)
	writeCfg(restored)
	startSvc()
	if c := field(do("GET", base+"/documents/"+id+"/content", nil, 200), "content"); c != "served by a Windows service, okapilantern" {
		t.Fatalf("restored content %q", c)
	}
	for deadline := time.Now().Add(time.Minute); !found("okapilantern", id); time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("fulltext search of the restored data dir does not find the document in a minute")
		}
	}
	got = do("GET", field(do("GET", base+"/documents/"+bigID+"/url", nil, 200), "url"), nil, 200)
	if sha256.Sum256(got) != sha256.Sum256(big) {
		t.Fatalf("restored upload: %d bytes, want %d", len(got), len(big))
	}
	stopSvc()

	if out := must(2*time.Minute, exe, "service", "uninstall", "--config", cfg); !strings.Contains(out, "uninstall done") {
		t.Fatalf("service uninstall: %s", out)
	}
	// The service is gone from the service manager's registry.
	if out, err := wineRun(time.Minute, "reg", "query", `HKLM\System\CurrentControlSet\Services\quire`); err == nil {
		t.Fatalf("the service's key is still there after the uninstall:\n%s", out)
	}
	if _, err := os.Stat(drive(dataDir + `\db`)); err != nil {
		t.Fatalf("the uninstall removed the documents: %v", err)
	}
}

func readFile(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

// forwarderDLL is a PE32+ (amd64) DLL named name that holds only
// exports, each forwarded to another DLL's function ("dll.Function").
func forwarderDLL(name string, forwards map[string]string) []byte {
	const (
		fileAlign = 0x200
		rva       = 0x1000
	)
	le := binary.LittleEndian
	names := make([]string, 0, len(forwards))
	for n := range forwards {
		names = append(names, n)
	}
	sort.Strings(names) // the loader binary-searches the names
	n := len(names)
	// The export section: its directory, the three arrays, the strings.
	edata := make([]byte, 40+n*4+n*4+n*2)
	str := func(s string) uint32 {
		off := uint32(len(edata))
		edata = append(edata, s...)
		edata = append(edata, 0)
		return rva + off
	}
	funcs, nameArr, ords := 40, 40+n*4, 40+n*8
	le.PutUint32(edata[12:], str(name))
	le.PutUint32(edata[16:], 1) // ordinal base
	le.PutUint32(edata[20:], uint32(n))
	le.PutUint32(edata[24:], uint32(n))
	le.PutUint32(edata[28:], rva+uint32(funcs))
	le.PutUint32(edata[32:], rva+uint32(nameArr))
	le.PutUint32(edata[36:], rva+uint32(ords))
	for i, fn := range names {
		// An address inside the export table is a forwarder's name.
		le.PutUint32(edata[funcs+i*4:], str(forwards[fn]))
		le.PutUint32(edata[nameArr+i*4:], str(fn))
		le.PutUint16(edata[ords+i*2:], uint16(i))
	}
	raw := (len(edata) + fileAlign - 1) / fileAlign * fileAlign
	virt := (len(edata) + 0xfff) / 0x1000 * 0x1000

	out := make([]byte, fileAlign+raw)
	copy(out, "MZ")
	le.PutUint32(out[0x3c:], 0x40)
	copy(out[0x40:], "PE\x00\x00")
	coff := out[0x44:]
	le.PutUint16(coff[0:], 0x8664)  // AMD64
	le.PutUint16(coff[2:], 1)       // one section
	le.PutUint16(coff[16:], 0xf0)   // optional header size
	le.PutUint16(coff[18:], 0x2022) // executable image, large address aware, DLL
	opt := out[0x58:]
	le.PutUint16(opt[0:], 0x20b) // PE32+
	opt[2] = 14
	le.PutUint32(opt[8:], uint32(raw)) // initialized data
	le.PutUint32(opt[20:], rva)        // base of code
	le.PutUint64(opt[24:], 0x180000000)
	le.PutUint32(opt[32:], 0x1000)
	le.PutUint32(opt[36:], fileAlign)
	le.PutUint16(opt[40:], 6)                // OS version
	le.PutUint16(opt[48:], 6)                // subsystem version
	le.PutUint32(opt[56:], uint32(rva+virt)) // image size
	le.PutUint32(opt[60:], fileAlign)        // headers size
	le.PutUint16(opt[68:], 3)                // console subsystem
	le.PutUint16(opt[70:], 0x160)            // high-entropy VA, dynamic base, NX
	le.PutUint64(opt[72:], 0x100000)
	le.PutUint64(opt[80:], 0x1000)
	le.PutUint64(opt[88:], 0x100000)
	le.PutUint64(opt[96:], 0x1000)
	le.PutUint32(opt[108:], 16)  // data directories
	le.PutUint32(opt[112:], rva) // the export table
	le.PutUint32(opt[116:], uint32(len(edata)))
	sec := out[0x58+0xf0:]
	copy(sec, ".edata")
	le.PutUint32(sec[8:], uint32(len(edata)))
	le.PutUint32(sec[12:], rva)
	le.PutUint32(sec[16:], uint32(raw))
	le.PutUint32(sec[20:], fileAlign)
	le.PutUint32(sec[36:], 0x40000040) // initialized data, readable
	copy(out[fileAlign:], edata)
	return out
}
