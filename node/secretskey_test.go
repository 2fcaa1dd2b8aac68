package node_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
)

// TestSecretsKey_RotationThroughTheLog: POST /system/secrets/rotate on a
// follower gives every member the same new secrets key (wrapped in the
// command with the key the members derive from the cluster CA, so the
// log and the store never hold it in clear), and each member still
// signs with the site's certificate through its own key.
func TestSecretsKey_RotationThroughTheLog(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	nodes := joinedCluster(t)
	n1 := nodes[0]
	keyOf := func(s *quiretest.Server) []byte {
		b, err := os.ReadFile(filepath.Join(s.DataDir, "keys", "secrets.key"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	old := keyOf(n1)
	for _, s := range nodes[1:] {
		if !bytes.Equal(keyOf(s), old) {
			t.Fatalf("%s joined with another secrets key", s.Node.Cluster.ID())
		}
	}
	tok := n1.Admin()
	p12 := quiretest.NewCertificate(t, "Nora Notary", time.Now().AddDate(1, 0, 0)).PKCS12(t, "pw")
	if r := n1.Do(http.MethodPost, "/sites/default/secrets", map[string]any{"alias": "notary", "data": base64.StdEncoding.EncodeToString(p12), "password": "pw"}, tok); r.Status != http.StatusCreated {
		t.Fatalf("add secret: %d %s", r.Status, r.Body)
	}

	// At once, through a follower that may not hold the secret yet: the
	// refused first try brings it up to date and the next one rotates.
	r := nodes[1].Do(http.MethodPost, "/system/secrets/rotate", map[string]any{}, tok)
	if r.Status != http.StatusOK {
		t.Fatalf("rotate through a follower: %d %s", r.Status, r.Body)
	}
	keyID := quiretest.Str(t, r.JSON(t), "keyId")
	var fresh []byte
	for _, s := range nodes {
		waitFor(t, s.Node.Cluster.ID()+" to install the new secrets key", 20*time.Second, func() bool {
			k := keyOf(s)
			return !bytes.Equal(k, old) && (fresh == nil || bytes.Equal(k, fresh))
		})
		if fresh == nil {
			fresh = keyOf(s)
		}
	}
	st, err := n1.Node.DB.GetSecretsKeyState()
	if err != nil || st.KeyID != keyID || len(st.Wrapped) == 0 {
		t.Fatalf("key state %+v %v", st, err)
	}
	raw, _ := hex.DecodeString(strings.TrimSpace(string(fresh)))
	if bytes.Contains(st.Wrapped, raw) || bytes.Contains(st.Wrapped, bytes.TrimSpace(fresh)) {
		t.Fatal("the store holds the new secrets key in clear")
	}
	for i, s := range nodes {
		up := s.Do(http.MethodPost, "/documents", map[string]any{"path": "rot/deed.pdf", "contentType": "application/pdf", "isBase64": true,
			"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Deed"))}, tok)
		if up.Status != http.StatusCreated {
			t.Fatalf("node %d: create: %d %s", i+1, up.Status, up.Body)
		}
		id := quiretest.Str(t, up.JSON(t), "documentId")
		c := s.Do(http.MethodPost, "/documents/"+id+"/certifications", map[string]any{"target": "DOWNLOAD", "certificates": []map[string]any{{"alias": "notary"}}}, tok)
		if c.Status != http.StatusCreated {
			t.Errorf("node %d: certify after the rotation: %d %s", i+1, c.Status, c.Body)
		}
	}
}
