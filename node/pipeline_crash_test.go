package node_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
)

// TestCrash_ActionsInFlightFinishAfterRestart kills a serving process while
// its pipeline runs actions (a slow webhook between a checksum and a
// fulltext), restarts on the same data dir and checks that every action of
// every acknowledged document reaches a final status, each recorded once.
func TestCrash_ActionsInFlightFinishAfterRestart(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	dir := t.TempDir()
	var mu sync.Mutex
	hooks := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(150 * time.Millisecond)
		var b struct {
			Documents []struct {
				DocumentID string `json:"documentId"`
			} `json:"documents"`
		}
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		for _, d := range b.Documents {
			hooks[d.DocumentID]++
		}
		mu.Unlock()
	}))
	defer recv.Close()

	cmd, addr := startCrashChild(t, dir)
	tok, err := auth.SignToken(dir, "", "crash", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	var ids []string
	for i := 0; i < 40; i++ {
		body, _ := json.Marshal(map[string]any{"contentType": "text/plain", "content": "document number " + strings.Repeat("x", i),
			"actions": []map[string]any{
				{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
				{"type": "WEBHOOK", "parameters": map[string]any{"url": recv.URL}},
				{"type": "FULLTEXT"},
			}})
		var r struct{ DocumentID string }
		if err := call(client, http.MethodPost, "http://"+addr+"/documents", tok, body, &r, http.StatusCreated); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.DocumentID)
	}
	// Kill once a few webhooks went out: some actions are done, some
	// running, most pending (40 slow webhooks take over a second).
	for i := 0; i < 1000; i++ {
		mu.Lock()
		n := len(hooks)
		mu.Unlock()
		if n >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	mu.Lock()
	before := len(hooks)
	mu.Unlock()
	if before == 0 || before == len(ids) {
		t.Fatalf("webhooks delivered before the kill: %d of %d; the kill must land mid-way", before, len(ids))
	}

	s := quiretest.StartServer(t, dir, quiretest.AllowLoopbackOutbound)
	admin := s.Token("check", "Admins")
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range ids {
		for {
			r := s.Do(http.MethodGet, "/documents/"+id+"/actions", nil, admin)
			if r.Status != http.StatusOK {
				t.Fatalf("actions of %s: %d %s", id, r.Status, r.Body)
			}
			var a struct {
				Actions []struct {
					Type, Status string
				}
			}
			json.Unmarshal(r.Body, &a)
			var st []string
			for _, x := range a.Actions {
				st = append(st, x.Status)
			}
			if strings.Join(st, ",") == "COMPLETE,COMPLETE,COMPLETE" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("document %s actions after restart: %v", id, st)
			}
			time.Sleep(50 * time.Millisecond)
		}
		d := s.Do(http.MethodGet, "/documents/"+id, nil, admin).JSON(t)
		if d["checksumType"] != "SHA256" {
			t.Fatalf("document %s has no checksum: %v", id, d)
		}
		mustOK := s.Do(http.MethodGet, "/documents/"+id+"/fulltext", nil, admin)
		if mustOK.Status != http.StatusOK {
			t.Fatalf("document %s has no fulltext: %s", id, mustOK.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if hooks[id] == 0 {
			t.Fatalf("webhook of %s never delivered", id)
		}
	}
	t.Logf("%d of %d webhooks were delivered before the kill", before, len(ids))
}
