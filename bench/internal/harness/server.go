package harness

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds the wait for a starting server to answer.
	readyTimeout = 30 * time.Second
	// stopGrace is how long a server gets to shut down after SIGTERM
	// before it is killed.
	stopGrace = 15 * time.Second
	// rssEvery is the RSS sampling period.
	rssEvery = 100 * time.Millisecond
	// apiTimeout bounds one API call.
	apiTimeout = 30 * time.Second
	// logTail is how much of the server log an error report quotes.
	logTail = 2 << 10
)

// benchProbeLimit is the bench servers' rate limit of GET /healthz,
// /readyz and /metrics: high enough never to answer 429 to the bench.
const benchProbeLimit = "100000/s burst 1000000, global 100000/s burst 1000000"

// Server is a bin/quire child process serving on a loopback port.
type Server struct {
	cmd      *exec.Cmd
	cancel   context.CancelFunc // stops the child: SIGTERM, then kill
	exited   chan struct{}      // closed when the child has exited
	waitErr  error              // the child's exit status, set before exited closes
	logPath  string
	logFile  *os.File
	Base     string // http://127.0.0.1:<port>
	Token    string
	Client   *http.Client // API calls, with a timeout
	transfer *http.Client // signed-URL transfers, bounded by their ctx
	RSS      *RSSSampler
	once     sync.Once
	ReadyIn  time.Duration // from the start to the first answer of /healthz
}

// StartServer starts bin serving dataDir on a free loopback port, waits
// until it answers, and gets an admin token. On error nothing is left
// running.
func StartServer(ctx context.Context, bin, dataDir, logPath string) (*Server, error) {
	return StartServerWith(ctx, bin, dataDir, logPath, ServerOpts{})
}

// ServerOpts are the ways a benchmark may start the server differently.
type ServerOpts struct {
	Cgroup *Cgroup  // run it inside this memory cgroup, nil for none
	Env    []string // added to the benchmark's environment
	Args   []string // added to serve's flags
	// Ready bounds the wait for the server to answer (0: readyTimeout).
	// A million documents in a memory limit with a cold page cache take
	// tens of seconds before the first answer (storage/DESIGN.md,
	// "Counting at a million").
	Ready time.Duration
}

// StartServerWith is StartServer with o.
func StartServerWith(ctx context.Context, bin, dataDir, logPath string, o ServerOpts) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithCancel(ctx)
	// The HTTP floor of the query rows is GET /healthz from 8 clients,
	// far over the probe class's default rate limit (10/s per client).
	args := append([]string{"serve", "--listen", addr, "--data-dir", dataDir, "--public-url", "http://" + addr,
		"--ratelimit-probe", benchProbeLimit}, o.Args...)
	cmd := o.Cgroup.Command(cctx, bin, args...)
	if len(o.Env) > 0 {
		cmd.Env = append(os.Environ(), o.Env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	killWithParent(cmd)
	if err := cmd.Start(); err != nil {
		cancel()
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	tr := newTransport()
	s := &Server{
		cmd: cmd, cancel: cancel, exited: make(chan struct{}),
		logPath: logPath, logFile: logFile, Base: "http://" + addr,
		Client:   &http.Client{Transport: tr, Timeout: apiTimeout},
		transfer: &http.Client{Transport: tr},
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	s.RSS = startRSS(cmd.Process.Pid, rssEvery)
	if err := s.init(ctx, bin, dataDir, cmp.Or(o.Ready, readyTimeout)); err != nil {
		s.Stop()
		return nil, s.WithLog(err)
	}
	return s, nil
}

// init waits for the server to answer and mints a token.
func (s *Server) init(ctx context.Context, bin, dataDir string, ready time.Duration) error {
	if err := s.waitReady(ctx, ready); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, bin, "token", "--data-dir", dataDir, "--user", "bench", "--groups", "Admins").Output()
	if err != nil {
		return fmt.Errorf("quire token: %w", exitDetail(err))
	}
	s.Token = strings.TrimSpace(string(out))
	if s.Token == "" {
		return errors.New("quire token printed nothing")
	}
	return nil
}

// newTransport returns a keep-alive transport for 64 concurrent clients.
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     64 << 10,
		ReadBufferSize:      64 << 10,
	}
}

// FreePort asks the kernel for a free loopback port. Another process could
// take it before the server binds it; StartServer then fails loudly.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls GET /healthz until it answers 200, for at most limit.
func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	began := time.Now()
	deadline := began.Add(limit)
	for time.Now().Before(deadline) {
		if err := s.CheckAlive(); err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+"/healthz", nil)
		if resp, err := s.Client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				s.ReadyIn = time.Since(began)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("server not ready after %s", limit)
}

// WaitIndexed polls GET /readyz until the server's index queue is empty
// and returns how long that took.
func (s *Server) WaitIndexed(ctx context.Context, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		if err := s.CheckAlive(); err != nil {
			return 0, err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+"/readyz", nil)
		if resp, err := s.Client.Do(req); err == nil {
			var body struct {
				Index struct {
					Queued uint64 `json:"queued"`
				} `json:"index"`
			}
			err := json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err == nil && body.Index.Queued == 0 {
				return time.Since(start), nil
			}
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("index queue not empty after %s", limit)
}

// CheckAlive returns an error if the child has exited.
func (s *Server) CheckAlive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("server exited: %v", s.waitErr)
	default:
		return nil
	}
}

// PID returns the child's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop shuts the child down (SIGTERM, then kill after stopGrace) and waits
// for it. It is safe to call more than once.
func (s *Server) Stop() {
	s.once.Do(func() {
		s.RSS.stop()
		s.cancel()
		<-s.exited
		s.Client.CloseIdleConnections()
		s.logFile.Close()
	})
}

// WithLog appends the tail of the server log to err.
func (s *Server) WithLog(err error) error {
	b, rerr := os.ReadFile(s.logPath)
	if rerr != nil || len(b) == 0 {
		return err
	}
	if len(b) > logTail {
		b = b[len(b)-logTail:]
	}
	return fmt.Errorf("%w\n--- server log (tail) ---\n%s", err, b)
}

// Request sends a request to path. An API path ("/documents") gets the
// token and the API client's timeout; a signed URL the server returned
// (which must point back at it) is its own credential, and transfers to
// it are bounded by ctx alone, as they can take minutes.
func (s *Server) Request(ctx context.Context, method, path string, body io.Reader, size int64, ctype string) (*http.Response, error) {
	signed := strings.Contains(path, "://")
	if signed && !strings.HasPrefix(path, s.Base+"/") {
		return nil, fmt.Errorf("refusing a URL outside the server: %s", path)
	}
	u, client := s.Base+path, s.Client
	if signed {
		u, client = path, s.transfer
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if !signed {
		req.Header.Set("Authorization", s.Token)
	}
	return client.Do(req)
}

// DoJSON sends in (if not nil) as JSON, checks the status is want and
// decodes the response into out (if not nil).
func (s *Server) DoJSON(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	var size int64
	ctype := ""
	if in != nil {
		ctype = "application/json"
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body, size = bytes.NewReader(b), int64(len(b))
	}
	resp, err := s.Request(ctx, method, path, body, size, ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := CheckStatus(resp, want); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// CheckStatus returns an error quoting the start of the body if resp's
// status is not want; it drains the body so the connection can be reused.
func CheckStatus(resp *http.Response, want int) error {
	if resp.StatusCode == want {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, want, strings.TrimSpace(string(b)))
}

// exitDetail adds a failed command's stderr to its error.
func exitDetail(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// JSONDecode decodes a response body and closes it.
func JSONDecode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// IndexState reads the index queue and lag from /readyz.
func (s *Server) IndexState(ctx context.Context) (uint64, time.Duration, error) {
	var body struct {
		Index struct {
			Queued     uint64  `json:"queued"`
			LagSeconds float64 `json:"lagSeconds"`
		} `json:"index"`
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.Base+"/readyz", nil)
	resp, err := s.Client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	if err := JSONDecode(resp, &body); err != nil {
		return 0, 0, err
	}
	return body.Index.Queued, time.Duration(body.Index.LagSeconds * float64(time.Second)), nil
}

// Tail returns the end of a command's output.
func Tail(b []byte) string {
	if len(b) > logTail {
		b = b[len(b)-logTail:]
	}
	return strings.TrimSpace(string(b))
}

// CPUProfile writes a CPU profile of the server at pprofAt over d
// (starting after the load's warm-up second) to path.
func CPUProfile(ctx context.Context, pprofAt string, d time.Duration, path string) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	u := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAt, max(int(d.Seconds()), 1))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	defer resp.Body.Close()
	if err := CheckStatus(resp, http.StatusOK); err != nil {
		return fmt.Errorf("cpu profile: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
