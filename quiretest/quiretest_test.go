package quiretest

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records what a helper reports and stops
// the goroutine on Fatal, as a test's own FailNow would.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.Errorf(f, a...)
	runtime.Goexit()
}

// report runs f with a recorder in its own goroutine and returns what f
// reported.
func report(f func(t testing.TB)) []string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msgs
}

// TestDo_TransportFailureIsTheCallersToReport: a request that cannot reach
// the server, made from a goroutine, returns at once with Status 0 and the
// reason instead of calling FailNow on the test that made the server (which
// from another goroutine would hang it until the test binary's timeout).
func TestDo_TransportFailureIsTheCallersToReport(t *testing.T) {
	s := NewServer(t)
	tok := s.Admin()
	if r := s.Do(http.MethodGet, "/sites", nil, tok); r.Status != http.StatusOK || r.Err != nil {
		t.Fatalf("server up: status %d err %v body %s", r.Status, r.Err, r.Body)
	}
	s.Close()

	const n = 8
	got := make(chan *Response, n)
	for range n {
		go func() { got <- s.Do(http.MethodPost, "/documents", map[string]any{"content": "x"}, tok) }()
	}
	deadline := time.After(30 * time.Second)
	for range n {
		select {
		case r := <-got:
			if r.Status != 0 || r.Err == nil {
				t.Fatalf("request to a closed server: status %d err %v", r.Status, r.Err)
			}
			if !strings.Contains(string(r.Body), r.Err.Error()) || !strings.Contains(r.Err.Error(), "POST /documents") {
				t.Fatalf("body %q, err %q: want the error text naming the request", r.Body, r.Err)
			}
		case <-deadline:
			t.Fatal("a request to a closed server did not return in 30s")
		}
	}

	// JSON reports the failed exchange to the t it is given.
	r := s.Do(http.MethodGet, "/sites", nil, tok)
	msgs := report(func(t testing.TB) { r.JSON(t) })
	if len(msgs) != 1 || !strings.Contains(msgs[0], "request failed") {
		t.Fatalf("JSON of a failed request reported %q", msgs)
	}
}

// TestDo_EncodeFailure: a body that cannot be encoded is a failed
// exchange too, not a Fatal on the server's test.
func TestDo_EncodeFailure(t *testing.T) {
	s := &Server{URL: "http://127.0.0.1:1", Client: http.DefaultClient}
	r := s.Do(http.MethodPost, "/x", map[string]any{"c": make(chan int)}, "")
	if r.Status != 0 || r.Err == nil || !strings.Contains(string(r.Body), "encode body") {
		t.Fatalf("status %d err %v body %q", r.Status, r.Err, r.Body)
	}
}

// TestFields: the checked reads return what is there and report to the t
// they are given what is not.
func TestFields(t *testing.T) {
	m := map[string]any{"s": "v", "n": 2.5, "b": true, "l": []any{map[string]any{"k": "x"}, "y"}, "o": map[string]any{}}
	if Str(t, m, "s") != "v" || Num(t, m, "n") != 2.5 || !Bool(t, m, "b") || len(List(t, m, "l")) != 2 || Obj(t, m["o"]) == nil || Str(t, Item(t, m, "l", 0), "k") != "x" {
		t.Fatal("a present field read wrong")
	}
	for name, f := range map[string]func(t testing.TB){
		"missing string":     func(t testing.TB) { Str(t, m, "nope") },
		"number as string":   func(t testing.TB) { Str(t, m, "n") },
		"string as number":   func(t testing.TB) { Num(t, m, "s") },
		"missing boolean":    func(t testing.TB) { Bool(t, m, "nope") },
		"object as array":    func(t testing.TB) { List(t, m, "o") },
		"string as object":   func(t testing.TB) { Obj(t, m["s"]) },
		"index out of range": func(t testing.TB) { Item(t, m, "l", 2) },
		"item not an object": func(t testing.TB) { Item(t, m, "l", 1) },
	} {
		if msgs := report(f); len(msgs) != 1 {
			t.Errorf("%s: reported %q, want one failure", name, msgs)
		}
	}
}
