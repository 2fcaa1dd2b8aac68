package directory_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestDelegationTokens(t *testing.T) {
	var logs syncBuffer
	s := quiretest.NewServer(t, func(c *quiretest.Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	admin := s.Admin()
	mint := func(t *testing.T, site string, body any) string {
		t.Helper()
		r := s.Do(http.MethodPost, "/sites/"+site+"/delegationTokens", body, admin)
		servertest.MustStatus(t, r, http.StatusOK)
		m := r.JSON(t)
		if h := quiretest.Str(t, m, "headerName"); h != "x-formkiq-delegation-token" {
			t.Fatalf("headerName = %q", h)
		}
		return quiretest.Str(t, m, "delegationToken")
	}
	with := func(method, path string, body any, tok, del string) *quiretest.Response {
		return s.DoHeaders(method, path, body, tok, map[string]string{"x-formkiq-delegation-token": del})
	}
	readOnly := mint(t, "finance", map[string]any{"permissions": []string{"READ"}, "onBehalfOf": map[string]any{"username": "clerk"}, "reason": "support ticket 42"})
	readWrite := mint(t, "finance", map[string]any{"permissions": []string{"READ", "WRITE"}, "onBehalfOf": map[string]any{"username": "clerk"}, "reason": "scanning on behalf"})
	doc := servertest.AddDoc(t, s, admin, "?siteId=finance", map[string]any{"path": "d.txt", "content": "d"})
	newDoc := map[string]any{"path": "e.txt", "content": "e"}

	for _, tt := range []struct {
		name, method, path string
		body               any
		tok, del           string
		want               int
	}{
		{"read with a READ token", "GET", "/documents/" + doc + "?siteId=finance", nil, admin, readOnly, 200},
		{"write with a READ token", "POST", "/documents?siteId=finance", newDoc, admin, readOnly, 401},
		{"delete with a READ token", "DELETE", "/documents/" + doc + "?siteId=finance", nil, admin, readOnly, 401},
		{"another site", "GET", "/documents?siteId=default", nil, admin, readOnly, 401},
		{"admin routes are gone", "GET", "/system/backup", nil, admin, readOnly, 401},
		{"no more than the caller has", "POST", "/documents?siteId=finance", newDoc, s.Token("ro", "finance_read"), readWrite, 401},
		{"the token alone is no credential", "GET", "/documents?siteId=finance", nil, readOnly, "", 401},
		{"a tampered token", "GET", "/documents?siteId=finance", nil, admin, readOnly[:len(readOnly)-4] + "AAAA", 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var r *quiretest.Response
			if tt.del == "" {
				r = s.Do(tt.method, tt.path, tt.body, tt.tok)
			} else {
				r = with(tt.method, tt.path, tt.body, tt.tok, tt.del)
			}
			servertest.MustStatus(t, r, tt.want)
		})
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+doc+"?siteId=finance", nil, admin), http.StatusOK)

	t.Run("acts on behalf of the named user", func(t *testing.T) {
		r := with(http.MethodPost, "/documents?siteId=finance", newDoc, admin, readWrite)
		servertest.MustStatus(t, r, http.StatusCreated)
		id := quiretest.Str(t, r.JSON(t), "documentId")
		r = s.Do(http.MethodGet, "/documents/"+id+"?siteId=finance", nil, admin)
		if u := quiretest.Str(t, r.JSON(t), "userId"); u != "clerk" {
			t.Errorf("userId = %q, want clerk", u)
		}
		out := logs.String()
		for _, want := range []string{"delegated request", "actor=admin", "onBehalfOf=clerk", "delegatedBy=admin", `reason="scanning on behalf"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the log lacks %q", want)
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, tt := range []struct {
			name string
			body any
			want string
		}{
			{"no permissions", map[string]any{"reason": "r"}, `{"errors":[{"key":"permissions","error":"'permissions' is required"}]}`},
			{"ADMIN", map[string]any{"permissions": []string{"ADMIN"}, "reason": "r"}, `{"errors":[{"key":"permissions","error":"a delegation token cannot grant ADMIN"}]}`},
			{"unknown permission", map[string]any{"permissions": []string{"FLY"}, "reason": "r"}, `{"errors":[{"key":"permissions","error":"invalid permission 'FLY'"}]}`},
			{"no reason", map[string]any{"permissions": []string{"READ"}}, `{"errors":[{"key":"reason","error":"'reason' is required"}]}`},
			{"reason too long", map[string]any{"permissions": []string{"READ"}, "reason": strings.Repeat("r", 1025)}, ""},
			{"onBehalfOf without username", map[string]any{"permissions": []string{"READ"}, "reason": "r", "onBehalfOf": map[string]any{}}, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				r := s.Do(http.MethodPost, "/sites/finance/delegationTokens", tt.body, admin)
				servertest.MustStatus(t, r, http.StatusBadRequest)
				if tt.want != "" {
					servertest.MustBody(t, r, tt.want)
				}
			})
		}
	})

	t.Run("ADMIN only", func(t *testing.T) {
		r := s.Do(http.MethodPost, "/sites/finance/delegationTokens", map[string]any{"permissions": []string{"READ"}, "reason": "r"}, s.Token("gov", "finance_govern"))
		servertest.MustStatus(t, r, http.StatusUnauthorized)
	})
}
