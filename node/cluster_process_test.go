package node_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/cli"
	"quire/quiretest"
	"quire/storage"
)

// TestMain removes the quire command the process tests built
// (quiretest.QuireBinary) when the package's tests end.
//
// The tests whose members are quire serve children (SIGKILL, SIGSTOP,
// restarts, a full tmpfs) call t.Parallel: they wait on their children,
// which run without the race detector, more than they compute, and each
// has its own data dirs, loopback ports and tmpfs. So do the in-process
// cluster tests that set no package hook and read nothing of the whole
// process ("in-process cluster of its own"): they wait on elections,
// timers and fsyncs more than they compute (about a third of a core
// each under -race), and each finds its leader, and any change of it,
// as the fault tests always did. go test runs the parallel tests after
// every serial test, -parallel (the core count) at a time, so none
// overlaps a test that stays serial: one that sets a package hook
// (node.SetTest...) or an environment variable
// (TestCluster_UnreadableRaftStateIsRebuiltByRejoin), one that measures
// the process's Go heap (TestCluster_LargeUploadThroughAFollower), the
// verification tests, which assert who verified and whom it demoted at
// a leader they found once, the two-member chunk sweep test, which
// counts the leader's scheduler starts (a two-voter cluster loses its
// leader at one late heartbeat: three starts in a parallel run), and
// TestCluster_ReadmittedMemberStartedBeforeALeaderVotesAgain (its
// readmit was answered 500 in a parallel run, 2026-12-02).
func TestMain(m *testing.M) {
	code := m.Run()
	quiretest.RemoveQuireBinary()
	os.Exit(code)
}

var servingRE = regexp.MustCompile(`msg="quire serving" listen=(\S+)`)

// cliProc is a `quire serve` child process (the shipped binary).
type cliProc struct {
	cmd  *exec.Cmd
	addr string
	log  string // its stderr, kept in a file
	done chan struct{}
}

// startServe runs `quire serve args...` in a child process and waits
// until it serves.
func startServe(t *testing.T, name string, args ...string) *cliProc {
	t.Helper()
	p, err := tryStartServe(t, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryStartServe is startServe that returns an error when the process
// exits before it serves (a refused join) or does not serve in a minute.
func tryStartServe(t *testing.T, name string, args ...string) (*cliProc, error) {
	t.Helper()
	// The shipped program, as `make build` makes it (not this race-built
	// test binary): what users run, at a fraction of the CPU.
	cmd := exec.Command(quiretest.QuireBinary(t), append([]string{"serve"}, args...)...)
	logPath := filepath.Join(t.TempDir(), name+".log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	cmd.Stdout = lf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &cliProc{cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	addrc := make(chan string, 1)
	go func() {
		defer lf.Close()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(lf, sc.Text())
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("%s's log (tail):\n%s", name, b)
		}
	})
	select {
	case p.addr = <-addrc:
	case <-p.done:
		b, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("%s exited before serving:\n%s", name, b)
	case <-time.After(60 * time.Second):
		p.kill()
		return nil, fmt.Errorf("%s did not start serving", name)
	}
	return p, nil
}

// signal sends sig to the process (SIGSTOP, SIGCONT).
func (p *cliProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// logHas reports whether the process's log holds s.
func (p *cliProc) logHas(s string) bool {
	b, _ := os.ReadFile(p.log)
	return bytes.Contains(b, []byte(s))
}

// kill ends the process with SIGKILL and waits for it (idempotent).
func (p *cliProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// memberClient trusts the self-signed certificates of the data dirs.
func memberClient(t *testing.T, dirs ...string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool.AppendCertsFromPEM(b)
	}
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

type apiAnswer struct {
	status int
	body   []byte
}

func apiDo(c *http.Client, method, url, token string, body any) apiAnswer {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return apiAnswer{body: []byte(err.Error())}
	}
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return apiAnswer{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return apiAnswer{status: resp.StatusCode, body: b}
}

type statusView struct {
	NodeID       string `json:"nodeId"`
	State        string `json:"state"`
	LeaderID     string `json:"leaderId"`
	AppliedIndex uint64 `json:"appliedIndex"`
	LastLogIndex uint64 `json:"lastLogIndex"`
	CommitIndex  uint64 `json:"commitIndex"`
	Term         uint64 `json:"term"`
	Unreadable   string `json:"raftStateUnreadable"`
	Peers        []struct {
		NodeID string `json:"nodeId"`
		Voter  bool   `json:"voter"`
	} `json:"peers"`
}

func clusterStatusOf(c *http.Client, base, token string) (statusView, bool) {
	var st statusView
	r := apiDo(c, http.MethodGet, base+"/cluster/status", token, nil)
	if r.status != http.StatusOK || json.Unmarshal(r.body, &st) != nil {
		return st, false
	}
	return st, true
}

// serveCluster is three `quire serve` processes formed from the
// command line (n1 bootstraps, n2 and n3 join with tokens from quire
// cluster token), as the README starts them.
type serveCluster struct {
	dirs  []string
	raft  []string
	procs []*cliProc
	c     *http.Client
	tok   string // signed with n1's keys
	tok3  string // signed with n3's keys (the cluster's too)
	// extra, when set, adds flags to node i's command line.
	extra func(i int) []string
	// mu guards procs[i] against a restart while writers read url(i).
	mu sync.Mutex
}

// args is node i's command line (without --bootstrap or --join).
func (sc *serveCluster) args(i int) []string {
	a := []string{"--data-dir", sc.dirs[i], "--listen", "127.0.0.1:0", "--tls-self-signed",
		"--node-id", fmt.Sprintf("n%d", i+1), "--raft-listen", sc.raft[i],
		"--min-free-bytes", strconv.FormatUint(storage.MinReserve(), 10), "--min-free-percent", "0"}
	if sc.extra != nil {
		a = append(a, sc.extra(i)...)
	}
	return a
}

// restart starts node i again with the command line it first had (n1
// keeps --bootstrap, which a node that holds state ignores).
func (sc *serveCluster) restart(t *testing.T, i int, name string) *cliProc {
	t.Helper()
	args := sc.args(i)
	if i == 0 {
		args = append(args, "--bootstrap")
	}
	p := startServe(t, name, args...)
	sc.mu.Lock()
	sc.procs[i] = p
	sc.mu.Unlock()
	return p
}

// url is node i's API (its address changes at every restart: --listen
// 127.0.0.1:0).
func (sc *serveCluster) url(i int) string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return "https://" + sc.procs[i].addr
}

// at is where a history writer writes to node i (history.write).
func (sc *serveCluster) at(i int) (*http.Client, string, string) { return sc.c, sc.url(i), sc.tok }

// bases are the members' APIs now.
func (sc *serveCluster) bases() []string {
	var b []string
	for i := range sc.procs {
		b = append(b, sc.url(i))
	}
	return b
}

func startServeCluster(t *testing.T) *serveCluster {
	t.Helper()
	return startServeClusterWith(t, nil)
}

// startServeClusterWith is startServeCluster with extra flags per node.
func startServeClusterWith(t *testing.T, extra func(i int) []string) *serveCluster {
	t.Helper()
	sc := &serveCluster{dirs: []string{t.TempDir(), t.TempDir(), t.TempDir()},
		raft: []string{freeAddr(t), freeAddr(t), freeAddr(t)}, extra: extra}
	n1 := startServe(t, "n1", append(sc.args(0), "--bootstrap")...)
	c := memberClient(t, sc.dirs[0])
	tok, err := auth.SignToken(sc.dirs[0], "", "ops", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to lead", 30*time.Second, func() bool {
		st, ok := clusterStatusOf(c, "https://"+n1.addr, tok)
		return ok && st.State == "Leader"
	})
	sc.procs, sc.c, sc.tok = []*cliProc{n1}, c, tok
	// Documents created without actions get none, as on quiretest's
	// servers (quiretest.Config's DefaultProcessing): the writes of these
	// tests are about the log, not the pipeline.
	off := map[string]any{"processing": map[string]any{"defaultActions": []string{}}}
	if r := apiDoKey(c, http.MethodPatch, "https://"+n1.addr+"/sites/default/configuration", tok, "", off); r.status != http.StatusOK {
		t.Fatalf("turn default processing off: %d %s", r.status, r.body)
	}
	sc.joinServe(t, 1, 0)
	sc.joinServe(t, 2, 1)
	sc.c = memberClient(t, sc.dirs...)
	// A token from n3's data dir works on every node: the keys are the
	// cluster's.
	tok3, err := auth.SignToken(sc.dirs[2], "", "ops", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sc.tok3 = tok3
	sc.agree(t, 60*time.Second)
	return sc
}

// joinServe starts node i with --join at the member via (n3 joins
// through n2, a follower, to test that path). A busy machine can cost
// the leader its lease while it adds a member; the join is then refused
// ("the leader changed while adding the node: join again with a new
// token", a documented answer) and the process exits: it is made again,
// with a new token and a new data dir, through whichever member leads
// by then, for up to three minutes.
func (sc *serveCluster) joinServe(t *testing.T, i, via int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for attempt := 1; ; attempt++ {
		var out, errb bytes.Buffer
		if code := cli.Main([]string{"cluster", "token", "--data-dir", sc.dirs[0], "--ttl", "10m"}, &out, &errb); code != 0 {
			t.Fatalf("quire cluster token: %d %s", code, errb.String())
		}
		args := append(sc.args(i), "--join", sc.url(via), "--join-token", strings.TrimSpace(out.String()))
		p, err := tryStartServe(t, fmt.Sprintf("n%d-join%d", i+1, attempt), args...)
		if err == nil {
			sc.mu.Lock()
			sc.procs = append(sc.procs, p)
			sc.mu.Unlock()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("n%d's join, attempt %d: %v", i+1, attempt, err)
		}
		t.Logf("n%d's join, attempt %d, made again: %.300v", i+1, attempt, err)
		sc.dirs[i] = t.TempDir()
		c := memberClient(t, sc.dirs[:len(sc.procs)]...)
		for j := range sc.procs {
			if st, ok := clusterStatusOf(c, sc.url(j), sc.tok); ok && st.State == "Leader" {
				via = j
			}
		}
	}
}

// agree waits until every member knows the same leader and lists three
// peers; it returns the leader's index.
func (sc *serveCluster) agree(t *testing.T, within time.Duration) int {
	t.Helper()
	lead := -1
	waitFor(t, "three members that know one leader", within, func() bool {
		lead = -1
		leaderID := ""
		for i := range sc.procs {
			st, ok := clusterStatusOf(sc.c, sc.url(i), sc.tok3)
			if !ok || st.LeaderID == "" || len(st.Peers) != 3 || (leaderID != "" && st.LeaderID != leaderID) {
				return false
			}
			leaderID = st.LeaderID
			if st.State == "Leader" {
				lead = i
			}
		}
		return lead >= 0
	})
	return lead
}

// TestCluster_ThreeServeProcessesSurviveTheLeadersSIGKILL starts three
// `quire serve` processes from the command line (n1 bootstraps, n2 and
// n3 join with tokens from quire cluster token) and kills the leader with
// SIGKILL while clients write through every node; the killed node
// restarts with the same command line and catches up while they go on
// writing. Then the history holds on every member (every acknowledged
// write whole on all three, every other on all or none) and the leader
// finds the replica digests equal.
func TestCluster_ThreeServeProcessesSurviveTheLeadersSIGKILL(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	sc := startServeCluster(t)
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"cluster", "status", "--url", sc.url(1), "--data-dir", sc.dirs[1]}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "node n2") || strings.Count(out.String(), "\nn") != 3 {
		t.Fatalf("quire cluster status: %d %q %q", code, out.String(), errb.String())
	}

	// Clients write through every node (followers forward to the
	// leader) before, during and after the leader's kill and restart;
	// the writers on the killed node meet a refused connection meanwhile.
	var h history
	stop := h.write(sc.at, []int{0, 1, 2, 1, 2}, 15*time.Second, 0)
	defer stop()
	h.waitAcked(t, "20 writes before the kill", 20, 30*time.Second)
	lead := procLeaderAmong(t, sc, 30*time.Second, 0, 1, 2)
	killedAt := time.Now()
	sc.procs[lead].kill()
	h.waitAcked(t, "20 writes after the leader's SIGKILL", 20, 30*time.Second)
	t.Logf("first 20 writes after the kill of n%d took %v", lead+1, time.Since(killedAt).Round(time.Millisecond))

	// The killed node restarts (same command line) and catches up.
	sc.restart(t, lead, fmt.Sprintf("n%d-again", lead+1))
	h.waitAcked(t, "20 writes after the restart", 20, 30*time.Second)
	waitFor(t, fmt.Sprintf("n%d to follow again", lead+1), 30*time.Second, func() bool {
		st, ok := clusterStatusOf(sc.c, sc.url(lead), sc.tok)
		return ok && st.LeaderID != ""
	})
	stop()

	bases := sc.bases()
	idx := settle(t, sc, bases, 60*time.Second)
	count := h.check(t, sc, bases)
	rep := verifyEqual(t, sc.c, bases[0], sc.tok)
	t.Logf("settled at applied index %d; %s; replica digests equal at %d", idx, h.summary(count), rep.Index)
}
