package node

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestServeAdmin_ServesEveryAdminPath: adminPaths (what serveForward
// hands to serveAdmin) and serveAdmin's cases agree. Every case decodes
// its body before it acts, so a body that is not JSON reaches each
// path's own case, which refuses it (400); a path without a case would
// reach the default, which answers 404 and names it.
func TestServeAdmin_ServesEveryAdminPath(t *testing.T) {
	n := &Node{}
	post := func(serve http.HandlerFunc, path, body string) (int, adminReply) {
		t.Helper()
		w := httptest.NewRecorder()
		serve(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
		var rep adminReply
		if w.Code == http.StatusOK {
			if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
				t.Errorf("POST %s: the answer %q: %v", path, w.Body.String(), err)
			}
		}
		return w.Code, rep
	}
	paths := make([]string, 0, len(adminPaths))
	for p, ok := range adminPaths {
		if !ok {
			t.Errorf("adminPaths lists %s as false: list only the paths served", p)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		code, rep := post(n.serveForward, p, "not json")
		if code != http.StatusOK || rep.Err == nil || rep.Err.Status != http.StatusBadRequest {
			t.Errorf("POST %s with a body that is not JSON: %d %+v, want its own case's 400 (is it in serveAdmin's switch?)", p, code, rep.Err)
		}
	}
	// A path serveAdmin has no case for answers a clear error.
	code, rep := post(n.serveAdmin, "/no-such-admin-path", "{}")
	if code != http.StatusOK || rep.Err == nil || rep.Err.Status != http.StatusNotFound || !strings.Contains(rep.Err.Msg, `"/no-such-admin-path"`) || rep.Value != nil {
		t.Errorf("an admin path without a case: %d %+v", code, rep)
	}
	// One outside adminPaths is not handed to serveAdmin at all.
	if code, _ := post(n.serveForward, "/no-such-admin-path", "{}"); code != http.StatusNotFound {
		t.Errorf("serveForward of a path outside adminPaths: %d, want 404", code)
	}
}
