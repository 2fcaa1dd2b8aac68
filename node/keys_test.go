package node_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"quire/quiretest"
)

// Key rotation goes through the log: after POST /system/keys/rotate on
// the leader, a token signed with the new key (the leader's key files)
// verifies on a follower, a token and a download URL signed before the
// rotation still verify everywhere within the grace, and a rotation
// without grace makes them invalid on every node.
func TestKeys_RotationThroughTheLogKeepsOldTokensWithinTheGrace(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	nodes := joinedCluster(t)
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	followers := []*quiretest.Server{n2, n3}

	old := n1.Admin()
	r := n1.Do(http.MethodPost, "/documents", map[string]any{"path": "k.txt", "content": "keys", "contentType": "text/plain"}, old)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	id := quiretest.Str(t, r.JSON(t), "documentId")
	u := n1.Do(http.MethodGet, "/documents/"+id+"/url", nil, old)
	if u.Status != http.StatusOK {
		t.Fatalf("download url: %d %s", u.Status, u.Body)
	}
	oldURL, err := url.Parse(quiretest.Str(t, u.JSON(t), "url"))
	if err != nil {
		t.Fatal(err)
	}

	rot := n1.Do(http.MethodPost, "/system/keys/rotate", map[string]any{"graceSeconds": 3600}, old)
	if rot.Status != http.StatusOK {
		t.Fatalf("rotate: %d %s", rot.Status, rot.Body)
	}
	kid := quiretest.Str(t, rot.JSON(t), "tokenKeyId")
	fresh := n1.Admin() // signed with the leader's key files: the new key
	if fresh == old {
		t.Fatal("the leader's key files still sign the old token")
	}
	for _, f := range followers {
		waitFor(t, f.Node.Cluster.ID()+" to verify a token of the new key", 20*time.Second, func() bool {
			return f.Do(http.MethodGet, "/documents", nil, fresh).Status == http.StatusOK
		})
		// Its own key files were rotated too (quire token on any member).
		if r := n1.Do(http.MethodGet, "/documents", nil, f.Admin()); r.Status != http.StatusOK {
			t.Fatalf("a token from %s's data dir on the leader: %d %s", f.Node.Cluster.ID(), r.Status, r.Body)
		}
	}
	for _, s := range []*quiretest.Server{n1, n2, n3} {
		if r := s.Do(http.MethodGet, "/documents", nil, old); r.Status != http.StatusOK {
			t.Fatalf("a token from before the rotation on %s within the grace: %d %s", s.Node.Cluster.ID(), r.Status, r.Body)
		}
		if d := s.Do(http.MethodGet, oldURL.RequestURI(), nil, ""); d.Status != http.StatusOK || string(d.Body) != "keys" {
			t.Fatalf("a download url from before the rotation on %s: %d %s", s.Node.Cluster.ID(), d.Status, d.Body)
		}
	}

	// Through a follower, without grace: the keys before it stop
	// verifying on every node; the newest ones work everywhere.
	rot2 := n2.Do(http.MethodPost, "/system/keys/rotate", map[string]any{"graceSeconds": 0}, fresh)
	if rot2.Status != http.StatusOK {
		t.Fatalf("rotate through a follower: %d %s", rot2.Status, rot2.Body)
	}
	if k2 := quiretest.Str(t, rot2.JSON(t), "tokenKeyId"); k2 == kid {
		t.Fatalf("second rotation kept key id %s", kid)
	}
	newest := n2.Admin()
	for _, s := range []*quiretest.Server{n1, n2, n3} {
		waitFor(t, s.Node.Cluster.ID()+" to apply the second rotation", 20*time.Second, func() bool {
			return s.Do(http.MethodGet, "/documents", nil, newest).Status == http.StatusOK
		})
		for _, tok := range []string{old, fresh} {
			if r := s.Do(http.MethodGet, "/documents", nil, tok); r.Status != http.StatusUnauthorized {
				t.Fatalf("a token of a retired key on %s: %d %s, want 401", s.Node.Cluster.ID(), r.Status, r.Body)
			}
		}
		if d := s.Do(http.MethodGet, oldURL.RequestURI(), nil, ""); d.Status != http.StatusForbidden {
			t.Fatalf("a download url of a retired key on %s: %d, want 403", s.Node.Cluster.ID(), d.Status)
		}
	}
	bad := n1.Do(http.MethodPost, "/system/keys/rotate", map[string]any{"graceSeconds": -1}, newest)
	if bad.Status != http.StatusBadRequest {
		t.Fatalf("negative grace: %d %s", bad.Status, bad.Body)
	}
}
