package servertest

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
)

// Step is one request of a scripted API conversation and what must come
// back: the status and, when resp is set, the exact body (or, with a
// leading "~", a substring of it).
type Step struct {
	Name, Method, Path string
	Body               any
	Want               int
	Resp               string
}

func RunSteps(t *testing.T, s *quiretest.Server, tok, site string, steps []Step) {
	t.Helper()
	for _, st := range steps {
		r := s.Do(st.Method, st.Path+Sep(st.Path)+strings.TrimPrefix(site, "?"), st.Body, tok)
		if r.Status != st.Want {
			t.Fatalf("%s: status %d, want %d: %s", st.Name, r.Status, st.Want, r.Body)
		}
		got := strings.TrimSpace(string(r.Body))
		switch {
		case st.Resp == "":
		case strings.HasPrefix(st.Resp, "~"):
			if !strings.Contains(got, st.Resp[1:]) {
				t.Fatalf("%s: body %s does not contain %s", st.Name, got, st.Resp[1:])
			}
		case got != st.Resp:
			t.Fatalf("%s: body %s\nwant %s", st.Name, got, st.Resp)
		}
	}
}

// Sep is the separator before the site query for path.
func Sep(path string) string {
	if strings.Contains(path, "?") {
		return "&"
	}
	return "?"
}

func DefineAttr(t *testing.T, s *quiretest.Server, tok, site, key, dataType string, extra map[string]any) {
	t.Helper()
	a := map[string]any{"key": key, "dataType": dataType}
	for k, v := range extra {
		a[k] = v
	}
	r := s.Do(http.MethodPost, "/attributes"+site, map[string]any{"attribute": a}, tok)
	MustStatus(t, r, http.StatusCreated)
}
