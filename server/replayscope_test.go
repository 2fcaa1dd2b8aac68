package server_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestIdempotencyKey_ReplayBelongsToOneCredential (issue 43, finding 5):
// a recorded answer is replayed only to the credential that made it (the
// user; each API key; each delegation), and the request's authorization
// (site role and folder permissions) runs before any replay.
func TestIdempotencyKey_ReplayBelongsToOneCredential(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	gov := s.Token("gov", "default_govern")
	secret := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "secret/salaries.txt", "content": "secret salaries", "contentType": "text/plain"})
	open := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "open/memo.txt", "content": "memo", "contentType": "text/plain"})
	servertest.SetFolderRoles(t, s, admin, "", "secret", map[string][]string{"secret_readers": {"READ"}})
	mkKey := func(name string, perms ...string) string {
		r := s.Do(http.MethodPost, "/sites/default/apiKeys", map[string]any{"name": name, "permissions": perms}, gov)
		servertest.MustStatus(t, r, http.StatusOK)
		return quiretest.Str(t, r.JSON(t), "apiKey")
	}
	roKey, rwKey, rwKey2 := mkKey("ro", "READ"), mkKey("rw", "READ", "WRITE"), mkKey("rw2", "READ", "WRITE")
	dl := s.Do(http.MethodPost, "/sites/default/delegationTokens", map[string]any{"permissions": []string{"READ", "WRITE"},
		"onBehalfOf": map[string]any{"username": "gov"}, "reason": "replay scope"}, admin)
	servertest.MustStatus(t, dl, http.StatusOK)
	delegation := map[string]string{"x-formkiq-delegation-token": quiretest.Str(t, dl.JSON(t), "delegationToken")}
	keyed := func(tok, key, method, path string, body any, extra map[string]string) *quiretest.Response {
		h := map[string]string{"Idempotency-Key": key}
		for k, v := range extra {
			h[k] = v
		}
		return s.DoHeaders(method, path, body, tok, h)
	}
	replayed := func(r *quiretest.Response) bool { return r.Header.Get("Idempotent-Replayed") == "true" }

	// The governor compresses the secret document; the READ key, denied
	// secret/, sends the same request with the same key: refused, with
	// no archive link.
	compress := map[string]any{"documentIds": []string{secret}}
	first := keyed(gov, "k-compress", http.MethodPost, "/documents/compress", compress, nil)
	servertest.MustStatus(t, first, http.StatusCreated)
	r := keyed(roKey, "k-compress", http.MethodPost, "/documents/compress", compress, nil)
	if r.Status < 400 || replayed(r) || strings.Contains(string(r.Body), "downloadUrl") {
		t.Errorf("a READ key without the folder replayed the governor's archive: %d %s", r.Status, r.Body)
	}

	// A create by the governor, then the same request and key by each
	// other credential: a write of their own, never the governor's
	// answer (its document id).
	add := map[string]any{"path": "open/new.txt", "content": "x"}
	g := keyed(gov, "k-add", http.MethodPost, "/documents", add, nil)
	servertest.MustStatus(t, g, http.StatusCreated)
	govDoc := quiretest.Str(t, g.JSON(t), "documentId")
	again := keyed(gov, "k-add", http.MethodPost, "/documents", add, nil)
	if !replayed(again) || quiretest.Str(t, again.JSON(t), "documentId") != govDoc {
		t.Fatalf("the governor's own retry was not replayed: %s %v", again.Body, again.Header)
	}
	seen := map[string]string{govDoc: "the governor"}
	for _, c := range []struct {
		name, tok string
		extra     map[string]string
	}{
		{"API key", rwKey, nil},
		{"another API key of the same creator", rwKey2, nil},
		{"a delegation on behalf of the governor", admin, delegation},
	} {
		r := keyed(c.tok, "k-add", http.MethodPost, "/documents", add, c.extra)
		if r.Status != http.StatusCreated || replayed(r) {
			t.Errorf("%s: %d replayed=%v %s, want a create of its own", c.name, r.Status, replayed(r), r.Body)
			continue
		}
		id := quiretest.Str(t, r.JSON(t), "documentId")
		if who, dup := seen[id]; dup {
			t.Errorf("%s got the answer of %s (%s)", c.name, who, id)
		}
		seen[id] = c.name
		// Its own retry is its own answer.
		if r2 := keyed(c.tok, "k-add", http.MethodPost, "/documents", add, c.extra); !replayed(r2) || quiretest.Str(t, r2.JSON(t), "documentId") != id {
			t.Errorf("%s: its own retry: %s", c.name, r2.Body)
		}
	}

	// Authorization runs before a replay: a reader whose folder right
	// was taken away after the first request does not get its answer.
	rita := s.Token("rita", "default", "open_readers")
	servertest.SetFolderRoles(t, s, admin, "", "open", map[string][]string{"open_readers": {"READ", "WRITE"}})
	body := map[string]any{"documentIds": []string{open}}
	servertest.MustStatus(t, keyed(rita, "k-rita", http.MethodPost, "/documents/compress", body, nil), http.StatusCreated)
	servertest.SetFolderRoles(t, s, admin, "", "open", map[string][]string{"others": {"READ"}})
	r = keyed(rita, "k-rita", http.MethodPost, "/documents/compress", body, nil)
	if r.Status < 400 || replayed(r) {
		t.Errorf("a retry after the folder right was taken away: %d replayed=%v %s", r.Status, replayed(r), r.Body)
	}
	// So does the site role: the READ key cannot replay a write.
	free := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "free/note.txt", "content": "note"})
	tag := map[string]any{"tags": []map[string]any{{"key": "k", "value": "v"}}}
	servertest.MustStatus(t, keyed(rwKey, "k-tag", http.MethodPost, "/documents/"+free+"/tags", tag, nil), http.StatusCreated)
	if r := keyed(roKey, "k-tag", http.MethodPost, "/documents/"+free+"/tags", tag, nil); r.Status < 400 || replayed(r) {
		t.Errorf("a READ key replayed a write: %d %s", r.Status, r.Body)
	}
}
