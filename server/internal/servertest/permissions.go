package servertest

import (
	"net/http"
	"testing"
	"time"

	"quire/quiretest"
)

// SetFolderRoles sets a folder's role permissions (roles: role name ->
// permissions).
func SetFolderRoles(t *testing.T, s *quiretest.Server, tok, site, path string, roles map[string][]string) {
	t.Helper()
	list := []any{}
	for name, perms := range roles {
		list = append(list, map[string]any{"roleName": name, "permissions": perms})
	}
	MustStatus(t, s.Do(http.MethodPut, "/folders/permissions"+site, map[string]any{"path": path, "roles": list}, tok), http.StatusOK)
}

func DocPath(t *testing.T, s *quiretest.Server, tok, site, id string) string {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+id+site, nil, tok)
	MustStatus(t, r, http.StatusOK)
	p, _ := r.JSON(t)["path"].(string)
	return p
}

// WaitFor polls cond every 50 ms for up to 30 s.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
