package node_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
	"quire/storage"
)

// TestCrash_EnvelopeCompletionIsAllOrNothing kills a serving process with
// SIGKILL while signers sign the last signature of many envelopes, each
// of which makes the signed PDF and completes the envelope. After the
// kill no envelope is completed without its signed PDF stored, every
// signature answered "completed" is there, and after a restart the
// leader completes the envelopes left signed.
func TestCrash_EnvelopeCompletionIsAllOrNothing(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	const n = 40
	dir := t.TempDir()
	cmd, addr := startCrashChild(t, dir)
	base := "http://" + addr
	tok, err := auth.SignToken(dir, "", "crash", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	body, _ := json.Marshal(map[string]any{"path": "sign/contract.pdf", "contentType": "application/pdf", "isBase64": true,
		"content": base64.StdEncoding.EncodeToString(quiretest.TextPDF("Contract"))})
	var doc struct{ DocumentID string }
	if err := call(client, http.MethodPost, base+"/documents", tok, body, &doc, http.StatusCreated); err != nil {
		cmd.Process.Kill()
		t.Fatal(err)
	}
	envs, links := make([]string, n), make([]string, n)
	for i := range n {
		body, _ := json.Marshal(map[string]any{"signers": []map[string]any{{"name": "Ann", "clientUserId": "ann", "recipientId": "1"}}})
		var e struct{ EnvelopeID string }
		if err := call(client, http.MethodPost, base+"/esignature/local/"+doc.DocumentID+"/envelopes", tok, body, &e, http.StatusOK); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		body, _ = json.Marshal(map[string]any{"recipientView": map[string]any{"recipientId": "1", "clientUserId": "ann"}})
		var v struct{ ViewURL string }
		if err := call(client, http.MethodPost, base+"/esignature/local/"+doc.DocumentID+"/envelopes/"+e.EnvelopeID+"/views/recipient", tok, body, &v, http.StatusOK); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		envs[i], links[i] = e.EnvelopeID, v.ViewURL[strings.Index(v.ViewURL, "/esign/"):]
	}
	completed := make([]atomic.Bool, n)
	var answered atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				body, _ := json.Marshal(map[string]any{"action": "sign", "typedName": fmt.Sprint("Ann ", i)})
				var r struct{ Status string }
				if call(client, http.MethodPost, base+links[i], "", body, &r, http.StatusOK) == nil {
					answered.Add(1)
					completed[i].Store(r.Status == storage.EnvelopeCompleted)
				}
			}
		}()
	}
	for i := 0; answered.Load() < n/3 && i < 30000; i++ {
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	wg.Wait()
	if got := answered.Load(); got == 0 || got == n {
		t.Fatalf("%d of %d signatures answered at the kill; it must land half-way", got, n)
	}

	db, err := storage.Open(storage.Config{Dir: filepath.Join(dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for i, id := range envs {
		e, err := db.GetEnvelope("default", id)
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		states[e.Status]++
		switch e.Status {
		case storage.EnvelopeCompleted:
			a, err := db.GetArtifact("default", doc.DocumentID, e.SignedArtifactID)
			if err != nil || !a.HasContent {
				t.Errorf("envelope %d completed without its signed PDF: %+v, %v", i, a, err)
			}
		case storage.EnvelopeSent, storage.EnvelopeSigned:
			if completed[i].Load() {
				t.Errorf("envelope %d was answered completed but is %s", i, e.Status)
			}
		default:
			t.Errorf("envelope %d is %s", i, e.Status)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("after the kill: %v", states)

	// The restarted leader completes what was left signed.
	s := quiretest.StartServer(t, dir)
	admin := s.Admin()
	deadline := time.Now().Add(60 * time.Second)
	for i, id := range envs {
		for {
			r := s.Do(http.MethodGet, "/esignature/local/"+doc.DocumentID+"/envelopes/"+id, nil, admin)
			if r.Status == http.StatusOK && (strings.Contains(string(r.Body), `"status":"completed"`) || strings.Contains(string(r.Body), `"status":"sent"`)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("envelope %d after restart: %d %s", i, r.Status, r.Body)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
