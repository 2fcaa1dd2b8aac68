package node_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"quire/auth"
	"quire/quiretest"
)

// startCrashChild runs `quire serve` (the shipped binary,
// quiretest.QuireBinary) on dir in a child process until the test kills
// it with SIGKILL, and returns it with its address. The pipeline crash
// test's webhook receiver is on loopback: --outbound-allow lets it be
// reached. extra are more flags.
func startCrashChild(t *testing.T, dir string, extra ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(quiretest.QuireBinary(t), append([]string{"serve", "--data-dir", dir, "--listen", "127.0.0.1:0",
		"--outbound-allow", "127.0.0.0/8,::1/128"}, extra...)...)
	logs, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := ""
	var head bytes.Buffer
	sc := bufio.NewScanner(logs)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if head.Len() < 16<<10 {
			fmt.Fprintln(&head, sc.Text())
		}
		if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("quire serve did not start:\n%s", head.String())
	}
	go io.Copy(io.Discard, logs)
	return cmd, addr
}

type acked struct {
	id  string
	sum [32]byte
}

// TestCrash_AcknowledgedDocumentsSurviveSIGKILL kills a serving process
// while clients create documents (inline and uploaded), restarts on the same
// data dir and checks that every document that got a 2xx is there with
// byte-identical content.
func TestCrash_AcknowledgedDocumentsSurviveSIGKILL(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		cmd, addr := startCrashChild(t, dir)
		base := "http://" + addr
		tok, err := auth.SignToken(dir, "", "crash", []string{"Admins"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}

		var mu sync.Mutex
		var ok []acked
		stop := make(chan struct{})
		var wg sync.WaitGroup
		client := &http.Client{Timeout: 10 * time.Second}
		for w := 0; w < 6; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				rnd := rand.New(rand.NewSource(int64(round*100 + w)))
				for i := 0; i < 10000; i++ {
					select {
					case <-stop:
						return
					default:
					}
					size := 100 + rnd.Intn(8000)
					if i%4 == 3 {
						size = 1<<20 + rnd.Intn(2<<20) // several chunks, through an upload URL
					}
					data := make([]byte, size)
					rnd.Read(data)
					id, err := create(client, base, tok, data, i%4 == 3)
					if err != nil {
						continue // the server died under us: not acknowledged
					}
					mu.Lock()
					ok = append(ok, acked{id: id, sum: sha256.Sum256(data)})
					mu.Unlock()
				}
			}(w)
		}
		time.Sleep(1500 * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		close(stop)
		wg.Wait()
		if len(ok) == 0 {
			t.Fatalf("round %d: no document was acknowledged before the kill", round)
		}

		s := quiretest.StartServer(t, dir)
		admin := s.Token("check", "Admins")
		for _, a := range ok {
			r := s.Do(http.MethodGet, "/documents/"+a.id+"/url", nil, admin)
			if r.Status != http.StatusOK {
				t.Fatalf("round %d: acknowledged document %s: %d %s", round, a.id, r.Status, r.Body)
			}
			var u struct{ URL string }
			json.Unmarshal(r.Body, &u)
			c := s.Do(http.MethodGet, u.URL, nil, "")
			if c.Status != http.StatusOK || sha256.Sum256(c.Body) != a.sum {
				t.Fatalf("round %d: document %s content differs after crash (status %d, %d bytes)", round, a.id, c.Status, len(c.Body))
			}
			// The search index caught up with storage on start.
			f := s.Do(http.MethodPost, "/search", map[string]any{"query": map[string]any{"filename": map[string]any{"beginsWith": a.id}}}, admin)
			if f.Status != http.StatusOK || !strings.Contains(string(f.Body), a.id) {
				t.Fatalf("round %d: document %s not findable by name after crash: %d %s", round, a.id, f.Status, f.Body)
			}
		}
		t.Logf("round %d: %d acknowledged documents intact after SIGKILL", round, len(ok))
		s.Close()
	}
}

func create(c *http.Client, base, tok string, data []byte, upload bool) (string, error) {
	if !upload {
		// Base64, so that any bytes survive JSON.
		body, _ := json.Marshal(map[string]any{"content": data, "isBase64": true})
		var r struct{ DocumentID string }
		if err := call(c, http.MethodPost, base+"/documents", tok, body, &r, http.StatusCreated); err != nil {
			return "", err
		}
		return r.DocumentID, nil
	}
	var r struct {
		DocumentID string
		URL        string
	}
	if err := call(c, http.MethodPost, base+"/documents/upload", tok, []byte(`{}`), &r, http.StatusCreated); err != nil {
		return "", err
	}
	if err := call(c, http.MethodPut, r.URL, "", data, nil, http.StatusOK); err != nil {
		return "", err
	}
	return r.DocumentID, nil
}

func call(c *http.Client, method, url, tok string, body []byte, out any, want int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if tok != "" {
		req.Header.Set("Authorization", tok)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
