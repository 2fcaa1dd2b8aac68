package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/quiretest"
	"quire/ratelimit"
	"quire/server/internal/servertest"
)

// fillPath puts x in every parameter of a route template.
func fillPath(path string) string {
	segs := strings.Split(path, "/")
	for i, sg := range segs {
		if strings.HasPrefix(sg, ":") || sg == "*" {
			segs[i] = "x"
		}
	}
	return strings.Join(segs, "/")
}

// TestRateLimits_EveryPublicRoute: every route of the route table that
// answers without a token has a rate-limit class, every declared class
// exists, and the configured limit takes effect on each such route: with
// one request an hour allowed, the second is 429 with Retry-After.
func TestRateLimits_EveryPublicRoute(t *testing.T) {
	one := map[string]string{}
	for _, c := range ratelimit.Classes {
		one[c.Name] = "1/h burst 1, global 1/h burst 1"
	}
	s := quiretest.NewServer(t, quiretest.RateLimits(one))
	classes := s.Node.Server.LimitClasses()
	routes := map[string]bool{}
	for _, rt := range s.Node.Server.App().GetRoutes(true) {
		routes[rt.Method+" "+rt.Path] = true
	}
	for r, class := range classes {
		if !routes[r] {
			t.Errorf("%s has class %q but is not in the route table", r, class)
		}
		if !ratelimit.Known(class) {
			t.Errorf("%s: unknown class %q", r, class)
		}
	}
	if len(classes) < 20 {
		t.Fatalf("only %d routes without a token: %v", len(classes), classes)
	}
	for r := range routes {
		method, path, _ := strings.Cut(r, " ")
		t.Run(r, func(t *testing.T) {
			url := s.URL + fillPath(path)
			status, _, body := servertest.RawDo(t, s.Client, method, url, "")
			if _, public := classes[r]; !public {
				// Behind the token check: without one, its 401.
				if status != http.StatusUnauthorized || (method != http.MethodHead && strings.TrimSpace(body) != `{"message":"Unauthorized"}`) {
					t.Fatalf("no token: %d %s; a route that answers without a token needs a rate-limit class (server.publicRoute)", status, body)
				}
				return
			}
			status, h, body := servertest.RawDo(t, s.Client, method, url, "")
			if status != http.StatusTooManyRequests {
				t.Fatalf("second request: %d %s, want 429", status, body)
			}
			if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
				t.Fatalf("Retry-After %q", h.Get("Retry-After"))
			}
			if method != http.MethodHead && !strings.HasPrefix(body, `{"message":"Too many requests`) {
				t.Fatalf("body %s", body)
			}
		})
	}
}

// TestRateLimits_JunkLoginsDoNotStarveRealLogin: a burst of junk sign-ins
// from one address gets 429 with Retry-After beyond its budget, and a
// real sign-in from another address meanwhile is not limited and
// succeeds (issue 29, finding 5).
func TestRateLimits_JunkLoginsDoNotStarveRealLogin(t *testing.T) {
	s := quiretest.NewServer(t, quiretest.RateLimits(map[string]string{ratelimit.SignIn: "10/min burst 5, global 10/s burst 40"}))
	admin := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/users", map[string]any{"user": map[string]any{"username": "ann"}, "temporaryPassword": "ann-temp-pw"}, admin), http.StatusOK)
	real := servertest.ClientFrom("127.0.0.2")
	// The first sign-in and its challenge, from the real client.
	status, _, body := servertest.RawDo(t, real, http.MethodPost, s.URL+"/login", `{"username":"ann","password":"ann-temp-pw"}`)
	if status != http.StatusOK || !strings.Contains(body, "NEW_PASSWORD_REQUIRED") {
		t.Fatalf("first sign-in: %d %s", status, body)
	}
	session := servertest.RegexpSession(t, body)
	status, _, body = servertest.RawDo(t, real, http.MethodPost, s.URL+"/respondToAuthChallenge", `{"session":"`+session+`","username":"ann","newPassword":"ann-password"}`)
	if status != http.StatusOK {
		t.Fatalf("challenge: %d %s", status, body)
	}

	const junk = 120
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		limited, others int
		bad             []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	attacker := servertest.ClientFrom("127.0.0.1")
	work := make(chan int)
	for range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/login",
					bytes.NewReader([]byte(`{"username":"nobody-`+strconv.Itoa(i)+`","password":"junk-password"}`)))
				req.Header.Set("Content-Type", "application/json")
				resp, err := attacker.Do(req)
				mu.Lock()
				switch {
				case err != nil:
					bad = append(bad, err.Error())
				case resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "":
					limited++
				case resp.StatusCode == http.StatusUnauthorized:
					others++
				default:
					bad = append(bad, resp.Status)
				}
				mu.Unlock()
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
	realDone := make(chan struct{})
	var realStatus int
	var realBody string
	go func() {
		defer close(realDone)
		realStatus, _, realBody = servertest.RawDo(t, real, http.MethodPost, s.URL+"/login", `{"username":"ann","password":"ann-password"}`)
	}()
	for i := range junk {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case <-realDone:
	case <-ctx.Done():
		t.Fatal("the real sign-in did not complete")
	}
	if len(bad) > 0 {
		t.Fatalf("junk sign-ins answered other than 401 or 429 with Retry-After: %v", bad[:min(5, len(bad))])
	}
	// The budget is 5 at once and 10 a minute: the rest is refused.
	if others > 8 || limited != junk-others {
		t.Fatalf("%d junk sign-ins checked, %d limited; want at most 8 checked", others, limited)
	}
	if realStatus != http.StatusOK || !strings.Contains(realBody, "AccessToken") {
		t.Fatalf("real sign-in: %d %s", realStatus, realBody)
	}
	r := s.Do(http.MethodGet, "/metrics", nil, "")
	servertest.MustStatus(t, r, http.StatusOK)
	want := `quire_ratelimited_total{route="/login"} ` + strconv.Itoa(limited)
	if !strings.Contains(string(r.Body), want) {
		t.Fatalf("metrics lack %q", want)
	}
}
