package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// apiDoKey is apiDo with an Idempotency-Key ("" for none); a transport
// error is status 0.
func apiDoKey(c *http.Client, method, u, token, key string, body any) apiAnswer {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return apiAnswer{body: []byte(err.Error())}
	}
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return apiAnswer{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusGatewayTimeout && resp.Header.Get("Quire-Write-Outcome") != "unknown" {
		return apiAnswer{status: 599, body: b} // a 504 without the documented header
	}
	return apiAnswer{status: resp.StatusCode, body: b}
}

// faultStats counts what writers saw during one fault.
type faultStats struct {
	keyedAcks, keyedRetries, plainAcks int
	plain                              map[string]int // answers other than 201 to writers without a key
	keyed                              map[string]int // answers other than 201 to writers with a key
}

func answerClass(r apiAnswer) string {
	if r.status == 0 {
		return "transport"
	}
	return strconv.Itoa(r.status)
}

var eoPathRE = regexp.MustCompile(`^eo/([ku]\d)/(\d+)`)

// TestCluster_ExactlyOnceThroughKillsAndPauses runs three `quire serve`
// processes with six writers, two per node: three send an
// Idempotency-Key with every logical write and send it again, with the
// same key, after any error (to the next node after a transport error),
// three send none and do not retry. Meanwhile the leader is SIGKILLed and
// restarted, the next leader is paused (SIGSTOP) for 8 s, a follower
// not restarted yet is SIGKILLed and restarted, and last any node still
// never restarted (the paused one, whatever its role by then) is
// SIGKILLed and restarted too: every node comes back from a SIGKILL at
// least once, with writes going on. Then every node holds every acknowledged
// document once: no logical write of either kind is lost or stored
// twice, every keyed logical write succeeded, and the writers without a
// key saw only the documented answers (201, the no-leader 503, the
// unknown-outcome 504 with its header, or a refused connection of a
// stopped node), never a 500.
func TestCluster_ExactlyOnceThroughKillsAndPauses(t *testing.T) {
	t.Parallel() // quire serve children: see TestMain
	sc := startServeCluster(t)
	procs, c, tok := sc.procs, sc.c, sc.tok
	args := func(i int) []string {
		if i == 0 {
			return append(sc.args(i), "--bootstrap")
		}
		return sc.args(i)
	}

	// The API addresses change at every restart (--listen :0).
	var amu sync.Mutex
	base := func(i int) string {
		amu.Lock()
		defer amu.Unlock()
		return "https://" + procs[i].addr
	}
	statusOf := func(i int) (statusView, bool) { return clusterStatusOf(c, base(i), tok) }
	leaderIndex := func() int {
		for i := range procs {
			if st, ok := statusOf(i); ok && st.State == "Leader" {
				return i
			}
		}
		return -1
	}
	faults := []string{"steady", "leader SIGKILL", "leader SIGSTOP 8s", "follower SIGKILL", "last node SIGKILL"}
	var (
		smu      sync.Mutex
		stats    = make([]faultStats, len(faults))
		phase    atomic.Int32
		acked    = map[string]string{} // logical write -> documentId
		begunIn  = map[string]int{}    // logical write -> the fault it began in
		failed   []string              // keyed logical writes that never succeeded
		answers  []string              // bad answers (500, 504 without its header, ...)
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		keyAcks  atomic.Int64
		stopping atomic.Bool
	)
	for i := range stats {
		stats[i].plain, stats[i].keyed = map[string]int{}, map[string]int{}
	}
	note := func(keyed bool, r apiAnswer) {
		smu.Lock()
		defer smu.Unlock()
		s := &stats[phase.Load()]
		cl := answerClass(r)
		switch {
		case r.status == http.StatusCreated && keyed:
			s.keyedAcks++
		case r.status == http.StatusCreated:
			s.plainAcks++
		case keyed:
			s.keyed[cl]++
			s.keyedRetries++
		default:
			s.plain[cl]++
		}
		switch r.status {
		// 408: a request that waited in a paused leader's socket past the
		// header deadline; it reached no handler (API.md, "Slow clients").
		case 0, http.StatusCreated, http.StatusRequestTimeout, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		default:
			answers = append(answers, fmt.Sprintf("%s: %d %s", faults[phase.Load()], r.status, r.body))
		}
	}
	docID := func(r apiAnswer) string {
		var m struct {
			DocumentID string `json:"documentId"`
		}
		json.Unmarshal(r.body, &m)
		return m.DocumentID
	}
	pause := func() bool {
		select {
		case <-stop:
			return false
		case <-time.After(50 * time.Millisecond):
			return true
		}
	}
	for w := range 3 {
		// A writer that sends an Idempotency-Key, bound to node w.
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stopping.Load(); i++ {
				name := fmt.Sprintf("k%d/%d", w, i)
				body := map[string]any{"path": "eo/" + name + ".txt", "content": name, "contentType": "text/plain"}
				node, give := w, time.Now().Add(60*time.Second)
				smu.Lock()
				begunIn[name] = int(phase.Load())
				smu.Unlock()
				for {
					r := apiDoKey(c, http.MethodPost, base(node)+"/documents", tok, "eo-"+name, body)
					note(true, r)
					if r.status == http.StatusCreated {
						smu.Lock()
						acked[name] = docID(r)
						smu.Unlock()
						keyAcks.Add(1)
						break
					}
					if time.Now().After(give) {
						smu.Lock()
						failed = append(failed, name)
						smu.Unlock()
						break
					}
					if r.status == 0 {
						node = (node + 1) % 3 // that node is down: try the next one
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
		// A writer without a key, bound to node w: no retries.
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				name := fmt.Sprintf("u%d/%d", w, i)
				smu.Lock()
				begunIn[name] = int(phase.Load())
				smu.Unlock()
				r := apiDoKey(c, http.MethodPost, base(w)+"/documents", tok, "", map[string]any{"path": "eo/" + name + ".txt", "content": name, "contentType": "text/plain"})
				note(false, r)
				if r.status == http.StatusCreated {
					smu.Lock()
					acked[name] = docID(r)
					smu.Unlock()
				} else if !pause() {
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	progress := func(what string, n int64) {
		t.Helper()
		from := keyAcks.Load()
		waitFor(t, what, 45*time.Second, func() bool { return keyAcks.Load() >= from+n })
	}
	var restarted [3]bool
	restart := func(i int) {
		t.Helper()
		restarted[i] = true
		p := startServe(t, fmt.Sprintf("n%d-again-%d", i+1, time.Now().UnixNano()), args(i)...)
		amu.Lock()
		procs[i] = p
		amu.Unlock()
		waitFor(t, fmt.Sprintf("n%d to follow a leader again", i+1), 45*time.Second, func() bool {
			st, ok := statusOf(i)
			return ok && st.LeaderID != ""
		})
	}
	failover := make([]time.Duration, len(faults))
	progress("writes before the faults", 30)

	// 1. The leader is SIGKILLed, then restarted.
	phase.Store(1)
	l := leaderIndex()
	if l < 0 {
		t.Fatal("no leader")
	}
	at := time.Now()
	procs[l].kill()
	progress("writes after the leader's SIGKILL", 20)
	failover[1] = time.Since(at)
	restart(l)
	progress("writes after the restart", 20)

	// 2. The leader is paused for 8 s with writes in flight on it.
	phase.Store(2)
	waitFor(t, "a leader", 30*time.Second, func() bool { return leaderIndex() >= 0 })
	l = leaderIndex()
	if l < 0 {
		t.Fatal("no leader")
	}
	at = time.Now()
	procs[l].cmd.Process.Signal(syscall.SIGSTOP)
	progress("writes while the leader is paused", 20)
	failover[2] = time.Since(at)
	time.Sleep(time.Until(at.Add(8 * time.Second)))
	procs[l].cmd.Process.Signal(syscall.SIGCONT)
	progress("writes after the paused leader came back", 20)

	// 3. A follower is SIGKILLed, then restarted.
	phase.Store(3)
	waitFor(t, "a leader", 30*time.Second, func() bool { return leaderIndex() >= 0 })
	l = leaderIndex()
	f := (l + 1) % 3
	for _, j := range []int{(l + 1) % 3, (l + 2) % 3} {
		if !restarted[j] {
			f = j // a follower never restarted yet, if there is one
			break
		}
	}
	at = time.Now()
	procs[f].kill()
	progress("writes after a follower's SIGKILL", 20)
	failover[3] = time.Since(at)
	restart(f)
	progress("writes after the follower's restart", 20)

	// 4. Every node never restarted yet (at most one by now: the paused
	// leader, when the follower killed was the first leader) is
	// SIGKILLed and restarted, whatever its role.
	phase.Store(4)
	lastNode := "none left"
	for i := range procs {
		if restarted[i] {
			continue
		}
		waitFor(t, "a leader", 30*time.Second, func() bool { return leaderIndex() >= 0 })
		role := "follower"
		if leaderIndex() == i {
			role = "leader"
		}
		lastNode = fmt.Sprintf("n%d (%s)", i+1, role)
		at = time.Now()
		procs[i].kill()
		progress(fmt.Sprintf("writes after n%d's SIGKILL", i+1), 20)
		failover[4] = time.Since(at)
		restart(i)
		progress(fmt.Sprintf("writes after n%d's restart", i+1), 20)
	}
	for i, r := range restarted {
		if !r {
			t.Errorf("n%d was never restarted", i+1)
		}
	}

	// The writers finish their logical writes (keyed ones until each
	// succeeds or gives up).
	stopping.Store(true)
	close(stop)
	wg.Wait()

	// Every node applies everything, then holds every acknowledged
	// document once.
	l = leaderIndex()
	if l < 0 {
		t.Fatal("no leader at the end")
	}
	ref, _ := statusOf(l)
	for i := range procs {
		waitFor(t, fmt.Sprintf("n%d to apply everything", i+1), 30*time.Second, func() bool {
			st, ok := statusOf(i)
			return ok && st.AppliedIndex >= ref.AppliedIndex
		})
	}
	lostIn, dupsIn := make([]int, len(faults)), make([]int, len(faults))
	var first map[string][]string // n1's logical writes, every member must hold the same
	for i := range procs {
		seen := map[string][]string{} // logical write -> documentIds
		next := ""
		for pages := 0; pages < 1000; pages++ {
			u := base(i) + "/documents?limit=100"
			if next != "" {
				u += "&next=" + url.QueryEscape(next)
			}
			r := apiDoKey(c, http.MethodGet, u, tok, "", nil)
			var page struct {
				Documents []struct {
					DocumentID string `json:"documentId"`
					Path       string `json:"path"`
				} `json:"documents"`
				Next string `json:"next"`
			}
			if r.status != http.StatusOK || json.Unmarshal(r.body, &page) != nil {
				t.Fatalf("n%d's documents: %d %s", i+1, r.status, r.body)
			}
			for _, d := range page.Documents {
				if m := eoPathRE.FindStringSubmatch(d.Path); m != nil {
					name := m[1] + "/" + m[2]
					seen[name] = append(seen[name], d.DocumentID)
				}
			}
			if next = page.Next; next == "" || len(page.Documents) == 0 {
				break
			}
		}
		var lost, dups []string
		for name, id := range acked {
			if !containsID(seen[name], id) {
				lost = append(lost, name)
			}
		}
		for name, ids := range seen {
			if len(ids) > 1 {
				dups = append(dups, fmt.Sprintf("%s %v", name, ids))
			}
		}
		sort.Strings(lost)
		sort.Strings(dups)
		for _, name := range lost {
			lostIn[begunIn[name]]++
		}
		for name, ids := range seen {
			if len(ids) > 1 {
				dupsIn[begunIn[name]] += len(ids) - 1
			}
		}
		if len(lost) > 0 || len(dups) > 0 {
			t.Errorf("n%d: %d acknowledged writes lost %v, %d stored twice %v", i+1, len(lost), firstFew(lost), len(dups), firstFew(dups))
		}
		if i == 0 {
			first = seen
			t.Logf("n1 holds %d documents of %d acknowledged logical writes", len(seen), len(acked))
		} else {
			// The history on every member: a write with no answer or a
			// 504 is on all of them or on none, with the same id.
			var differ []string
			for name := range first {
				if !slices.Equal(sorted(first[name]), sorted(seen[name])) {
					differ = append(differ, name)
				}
			}
			for name := range seen {
				if _, ok := first[name]; !ok {
					differ = append(differ, name)
				}
			}
			sort.Strings(differ)
			if len(differ) > 0 {
				t.Errorf("n%d and n1 differ in %d logical writes: %v", i+1, len(differ), firstFew(differ))
			}
		}
	}
	verifyEqual(t, c, base(l), tok)
	if len(failed) > 0 {
		t.Errorf("%d keyed logical writes never succeeded: %v", len(failed), firstFew(failed))
	}
	if len(answers) > 0 {
		t.Errorf("%d undocumented answers: %v", len(answers), firstFew(answers))
	}
	// Per fault (lost and duplicates summed over the three nodes, by the
	// fault the logical write began in; failover: the fault to the
	// 20th keyed write acknowledged after it).
	t.Logf("last node SIGKILLed: %s", lastNode)
	for i, s := range stats {
		t.Logf("%-18s failover %-6v keyed: %d acked, %d errors retried %v; no key: %d acked, errors %v; lost %d, duplicates %d",
			faults[i], failover[i].Round(10*time.Millisecond), s.keyedAcks, s.keyedRetries, s.keyed, s.plainAcks, s.plain, lostIn[i], dupsIn[i])
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func containsID(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func firstFew(s []string) []string {
	if len(s) > 5 {
		return s[:5]
	}
	return s
}
