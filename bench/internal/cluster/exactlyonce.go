package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/bench/internal/harness"
)

// faultWriters write through the followers of a cluster while a fault
// happens (the failover row): per follower, one writer sends an
// Idempotency-Key with every logical write and sends it again, with the
// same key, after any error; one sends none and does not retry. Each
// logical write has its own path, so the documents a node holds tell
// duplicates apart (exactly-once, API.md "Exactly-once writes").
type faultWriters struct {
	tag        string // the fault: its writers' paths begin with fault/<tag>/
	mu         sync.Mutex
	keyedAcks  int
	keyedErrs  map[string]int // answers other than 201 to the keyed writers (each one retried)
	keyedFail  int            // keyed logical writes that never succeeded
	plainAcks  int
	plainErrs  map[string]int
	acked      map[string]bool // logical writes acknowledged
	stop, done chan struct{}
	wg         sync.WaitGroup
}

var faultPathRE = regexp.MustCompile(`^fault/([a-z]+)/([kp]\d+)/(\d+)`)

func startFaultWriters(ctx context.Context, tag string, srvs []*harness.Server) *faultWriters {
	fw := &faultWriters{tag: tag, keyedErrs: map[string]int{}, plainErrs: map[string]int{}, acked: map[string]bool{}, stop: make(chan struct{})}
	post := func(srv *harness.Server, key, name string) string {
		b, _ := json.Marshal(map[string]any{"path": "fault/" + tag + "/" + name + ".txt", "content": name, "contentType": "text/plain"})
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, srv.Base+"/documents", bytes.NewReader(b))
		if err != nil {
			return "request"
		}
		req.Header.Set("Authorization", srv.Token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := srv.Client.Do(req)
		if err != nil {
			return "transport"
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return strconv.Itoa(resp.StatusCode)
	}
	stopped := func() bool {
		select {
		case <-fw.stop:
			return true
		default:
			return false
		}
	}
	for w, srv := range srvs {
		fw.wg.Add(2)
		go func() { // with a key: every logical write until it succeeds
			defer fw.wg.Done()
			for i := 0; !stopped(); i++ {
				name := fmt.Sprintf("k%d/%d", w, i)
				give := time.Now().Add(time.Minute)
				for {
					a := post(srv, "bench-"+tag+"-"+name, name)
					fw.mu.Lock()
					if a == "201" {
						fw.keyedAcks++
						fw.acked[name] = true
					} else {
						fw.keyedErrs[a]++
					}
					fw.mu.Unlock()
					if a == "201" {
						break
					}
					if time.Now().After(give) || ctx.Err() != nil {
						fw.mu.Lock()
						fw.keyedFail++
						fw.mu.Unlock()
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
		go func() { // without a key: no retries
			defer fw.wg.Done()
			for i := 0; !stopped() && ctx.Err() == nil; i++ {
				name := fmt.Sprintf("p%d/%d", w, i)
				a := post(srv, "", name)
				fw.mu.Lock()
				if a == "201" {
					fw.plainAcks++
					fw.acked[name] = true
				} else {
					fw.plainErrs[a]++
				}
				fw.mu.Unlock()
				if a != "201" {
					time.Sleep(50 * time.Millisecond)
				}
			}
		}()
	}
	return fw
}

// finish stops the writers (a keyed one ends its logical write first).
func (fw *faultWriters) finish() {
	close(fw.stop)
	fw.wg.Wait()
}

// duplicates lists the documents of srv and counts the logical writes
// stored more than once and the acknowledged ones missing.
func (fw *faultWriters) duplicates(ctx context.Context, srv *harness.Server) (dups, lost int, err error) {
	seen := map[string]int{}
	next := ""
	for pages := 0; pages < 10000; pages++ {
		u := srv.Base + "/documents?limit=100"
		if next != "" {
			u += "&next=" + url.QueryEscape(next)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return 0, 0, err
		}
		req.Header.Set("Authorization", srv.Token)
		resp, err := srv.Client.Do(req)
		if err != nil {
			return 0, 0, err
		}
		var page struct {
			Documents []struct {
				Path string `json:"path"`
			} `json:"documents"`
			Next string `json:"next"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			return 0, 0, err
		}
		for _, d := range page.Documents {
			if m := faultPathRE.FindStringSubmatch(d.Path); m != nil && m[1] == fw.tag {
				seen[m[2]+"/"+m[3]]++
			}
		}
		if next = page.Next; next == "" || len(page.Documents) == 0 {
			break
		}
	}
	for _, n := range seen {
		if n > 1 {
			dups += n - 1
		}
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	for name := range fw.acked {
		if seen[name] == 0 {
			lost++
		}
	}
	return dups, lost, nil
}

func countsString(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
