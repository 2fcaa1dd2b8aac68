package server_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/node"
	"quire/quiretest"
	"quire/server"
	"quire/server/internal/servertest"
)

// withTimeouts shortens the server's client timeouts so tests run fast.
func withTimeouts(t server.Timeouts, maxPerClient int) quiretest.Option {
	return func(c *quiretest.Config) {
		c.Timeouts = t
		c.MaxConnsPerClient = maxPerClient
	}
}

// closedWithin reads c until the server closes it and fails the test if
// that takes longer than d. It returns what the server sent.
func closedWithin(t *testing.T, c net.Conn, d time.Duration) []byte {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(d))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v (%d bytes received)", d, len(b))
	}
	return b
}

// TestSlowClients_StalledHeader: a client that sends nothing, half a
// request line, half its headers or trickles its header a byte at a time
// is disconnected once the header timeout has passed.
func TestSlowClients_StalledHeader(t *testing.T) {
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Header: 300 * time.Millisecond}, 0))
	cases := []struct {
		name, sent string
		trickle    bool
	}{
		{"nothing", "", false},
		{"half a request line", "GET /vers", false},
		{"half the headers", "GET /version HTTP/1.1\r\nHost: x\r\nAuthoriz", false},
		{"trickled header", "GET /version HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 200), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := servertest.Dial(t, s, "")
			if !tc.trickle {
				io.WriteString(c, tc.sent)
			} else {
				// One byte every 20 ms: progress, but the header never
				// ends. Stops at the first failed write (closed).
				go func() {
					for i := 0; i < len(tc.sent); i++ {
						if _, err := c.Write([]byte{tc.sent[i]}); err != nil {
							return
						}
						time.Sleep(20 * time.Millisecond)
					}
				}()
			}
			closedWithin(t, c, 3*time.Second)
		})
	}
}

// TestSlowClients_BodyProgress: a body that keeps moving is read past the
// header timeout (the deadline is per read, not for the whole body); one
// that stalls is cut after the body timeout and nothing is committed.
func TestSlowClients_BodyProgress(t *testing.T) {
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Header: 400 * time.Millisecond, Body: 600 * time.Millisecond}, 0))
	tok := s.Admin()

	t.Run("trickled upload completes", func(t *testing.T) {
		id, uri := servertest.NewUpload(t, s, tok)
		const size = 16<<10 + 40*64
		c := servertest.Dial(t, s, "")
		fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", uri, size)
		c.Write(bytes.Repeat([]byte("a"), 16<<10))
		// 40 pieces 50 ms apart: 2 s in all, far past the header timeout,
		// each well within the body timeout.
		for i := 0; i < 40; i++ {
			time.Sleep(50 * time.Millisecond)
			if _, err := c.Write(bytes.Repeat([]byte("b"), 64)); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("trickled upload: status %d", resp.StatusCode)
		}
		if got := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t)["contentLength"]; got != float64(size) {
			t.Fatalf("contentLength %v, want %d", got, size)
		}
	})

	t.Run("stalled upload is cut", func(t *testing.T) {
		id, uri := servertest.NewUpload(t, s, tok)
		before := servertest.UploadPuts(t, s)
		c := servertest.Dial(t, s, "")
		fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", uri, 1<<20)
		c.Write(bytes.Repeat([]byte("a"), 64<<10))
		closedWithin(t, c, 3*time.Second)
		servertest.WaitUploadPuts(t, s, before+1)
		if got := s.Do(http.MethodGet, "/documents/"+id, nil, tok).JSON(t); got["contentLength"] != nil {
			t.Fatalf("stalled upload committed: %v", got)
		}
	})
}

// TestSlowClients_Downloads: a download to a reader that stops reading is
// cut after the write timeout, while a slow but steady reader gets it all.
func TestSlowClients_Downloads(t *testing.T) {
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Write: 500 * time.Millisecond}, 0))
	tok := s.Admin()
	id, uri := servertest.NewUpload(t, s, tok)
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB: more than the socket buffers
	servertest.MustStatus(t, s.Do(http.MethodPut, s.URL+uri, content, ""), http.StatusOK)
	u, err := url.Parse(fmt.Sprint(s.Do(http.MethodGet, "/documents/"+id+"/url", nil, tok).JSON(t)["url"]))
	if err != nil {
		t.Fatal(err)
	}
	get := func(c net.Conn) {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", u.RequestURI())
	}

	t.Run("stopped reader", func(t *testing.T) {
		c := servertest.Dial(t, s, "")
		get(c)
		// Not reading for three times the write timeout (the socket
		// buffers fill long before); the deadline below is the proof.
		time.Sleep(1500 * time.Millisecond)
		b := closedWithin(t, c, 10*time.Second)
		if len(b) >= len(content) {
			t.Fatalf("a reader that stopped got all %d bytes", len(b))
		}
	})

	t.Run("slow steady reader", func(t *testing.T) {
		c := servertest.Dial(t, s, "")
		get(c)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// 256 KiB every 10 ms: about 1 s for the whole, longer than
		// several write timeouts.
		var n int64
		buf := make([]byte, 256<<10)
		for {
			k, err := io.ReadFull(resp.Body, buf)
			n += int64(k)
			if err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n != int64(len(content)) {
			t.Fatalf("slow reader got %d of %d bytes", n, len(content))
		}
	})
}

// TestSlowClients_IdleSockets: 2,000 sockets that never finish a request
// do not keep a normal client from getting answers, and every one of them
// is closed by the header timeout.
func TestSlowClients_IdleSockets(t *testing.T) {
	const idle = 2000
	raiseOpenFiles(t, 2*idle+1000)
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Header: 1500 * time.Millisecond}, idle+100))
	tok := s.Admin()
	conns := make([]net.Conn, 0, idle)
	for i := 0; i < idle; i++ {
		c := servertest.Dial(t, s, "")
		if i%2 == 0 {
			io.WriteString(c, "POST /documents HTTP/1.1\r\nHost: x\r\n")
		}
		conns = append(conns, c)
	}
	for i := 0; i < 5; i++ {
		start := time.Now()
		servertest.MustStatus(t, s.Do(http.MethodGet, "/version", nil, tok), http.StatusOK)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("request %d took %v with %d idle sockets", i, d, idle)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := 0
	deadline := time.Now().Add(10 * time.Second)
	for _, c := range conns {
		wg.Add(1)
		go func(c net.Conn) {
			defer wg.Done()
			c.SetReadDeadline(deadline)
			_, err := io.ReadAll(c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				mu.Lock()
				open++
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	if open > 0 {
		t.Fatalf("%d of %d idle sockets still open after 10 s", open, idle)
	}
}

// TestSlowClients_PerClientCap: connections over the per-address cap are
// closed at accept; other addresses are served; a closed connection frees
// its slot; refusals are counted in /metrics.
func TestSlowClients_PerClientCap(t *testing.T) {
	const max = 5
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{}, max))
	held := make([]net.Conn, max)
	for i := range held {
		held[i] = servertest.Dial(t, s, "127.0.0.1")
		rawGet(t, held[i], "/healthz")
	}
	over := servertest.Dial(t, s, "127.0.0.1")
	io.WriteString(over, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	if b := closedWithin(t, over, 5*time.Second); len(b) != 0 {
		t.Fatalf("connection over the cap was answered: %q", b)
	}
	// Another address is not affected.
	rawGet(t, servertest.Dial(t, s, "127.0.0.2"), "/healthz")
	// A slot frees when a connection closes (the server notices the close
	// asynchronously: retry within a deadline).
	held[0].Close()
	ok := false
	for end := time.Now().Add(5 * time.Second); !ok && time.Now().Before(end); {
		c := servertest.Dial(t, s, "127.0.0.1")
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if r, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && r.StatusCode == http.StatusOK {
			ok = true
		}
		c.Close()
	}
	if !ok {
		t.Fatal("no connection accepted after one under the cap closed")
	}
	if r := rawGet(t, servertest.Dial(t, s, "127.0.0.2"), "/metrics"); !regexp.MustCompile(`(?m)^quire_http_connections_refused_total [1-9]`).Match(r) {
		t.Fatalf("refusals not counted in /metrics")
	}
}

// rawGet sends GET path on c and returns the answer's body (fails on
// anything but a 200).
func rawGet(t *testing.T, c net.Conn, path string) []byte {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, r.StatusCode, err)
	}
	return b
}

// TestSlowClients_UnauthenticatedBody: no body is buffered before the
// token is checked (a multipart body used to be read whole first), and the
// discard of an unread body ends at its deadline even while the client
// trickles.
func TestSlowClients_UnauthenticatedBody(t *testing.T) {
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Header: 20 * time.Second, Body: 300 * time.Millisecond, Drain: 500 * time.Millisecond}, 0))
	cases := []struct {
		name, ctype string
		trickle     bool
	}{
		{"multipart stalls", "multipart/form-data; boundary=xyz", false},
		{"json stalls", "application/json", false},
		{"multipart trickles", "multipart/form-data; boundary=xyz", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := servertest.Dial(t, s, "")
			fmt.Fprintf(c, "POST /documents HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", tc.ctype, 100<<20)
			c.Write([]byte("--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f\"\r\n\r\n"))
			c.Write(bytes.Repeat([]byte("a"), 16<<10))
			if tc.trickle {
				go func() {
					for i := 0; i < 200; i++ {
						if _, err := c.Write([]byte("a")); err != nil {
							return
						}
						time.Sleep(50 * time.Millisecond)
					}
				}()
			}
			b := closedWithin(t, c, 4*time.Second)
			if !bytes.HasPrefix(b, []byte("HTTP/1.1 401")) {
				t.Fatalf("answer %q, want a 401", b)
			}
		})
	}
}

// TestSlowClients_TLSHandshake: a client that connects to the HTTPS port
// and never completes the handshake is closed after the handshake timeout
// (well before the header timeout), while HTTPS requests are served.
func TestSlowClients_TLSHandshake(t *testing.T) {
	s := quiretest.NewServer(t, withTimeouts(server.Timeouts{Header: 20 * time.Second, TLSHandshake: 500 * time.Millisecond}, 0),
		func(c *quiretest.Config) { c.TLS = node.TLSConfig{SelfSigned: true} })
	for _, sent := range []string{"", "\x16\x03\x01"} {
		c := servertest.Dial(t, s, "")
		io.WriteString(c, sent)
		closedWithin(t, c, 3*time.Second)
	}
	tc := tls.Client(servertest.Dial(t, s, ""), &tls.Config{InsecureSkipVerify: true})
	if !bytes.Contains(rawGet(t, tc, "/healthz"), []byte("ok")) {
		t.Fatal("HTTPS /healthz")
	}
}
