package node_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"quire/node"
	"quire/quiretest"
)

// The register workload: the value of tag "reg" on a few documents.
// Writes are PUT /documents/{id}/tags/reg through any node's API. Two
// kinds of read:
//   - a barrier read (Cluster.Barrier on the node that leads, then the
//     store): what Quire offers as a linearizable read. Writes and
//     barrier reads together must be linearizable (porcupine).
//   - GET /documents/{id}/tags/reg on the node a client is bound to:
//     served locally, possibly stale, so not linearizable across
//     clients. What Quire promises for them (cluster/DESIGN.md,
//     "Consistency"): a client reads its own acknowledged writes on the
//     node it wrote through, a node's reads never go back in time, and
//     no read returns a value nobody wrote. sessionViolations checks
//     exactly that.

const initValue = "init"

// regOp is one operation of the history.
type regOp struct {
	client int
	key    int
	write  bool
	value  string // written, or read
	call   int64  // ns since the run started
	ret    int64
	known  bool // a write that was acknowledged (2xx); else unknown
}

type regInput struct {
	key   int
	write bool
	value string
}

// registerModel is a register per key, starting at initValue. A write's
// output is not checked (an unknown write is one whose return is at the
// end of time: it may take effect at any point after its call, or never
// observably).
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		var keys []int
		for _, op := range history {
			in, _ := op.Input.(regInput)
			if _, ok := byKey[in.key]; !ok {
				keys = append(keys, in.key)
			}
			byKey[in.key] = append(byKey[in.key], op)
		}
		sort.Ints(keys)
		var out [][]porcupine.Operation
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return initValue },
	Step: func(state, input, output any) (bool, any) {
		st, _ := state.(string)
		in, ok := input.(regInput)
		if !ok {
			return false, state
		}
		if in.write {
			return true, in.value
		}
		got, _ := output.(string)
		return got == st, st
	},
	DescribeOperation: func(input, output any) string {
		in, _ := input.(regInput)
		if in.write {
			return fmt.Sprintf("put(k%d, %s)", in.key, in.value)
		}
		return fmt.Sprintf("get(k%d) → %v", in.key, output)
	},
}

// porcupineHistory turns writes and barrier reads into porcupine's
// operations; an unknown write returns at the end of time.
func porcupineHistory(ops []regOp) []porcupine.Operation {
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		o := porcupine.Operation{ClientId: op.client, Input: regInput{key: op.key, write: op.write, value: op.value}, Call: op.call, Return: op.ret}
		if op.write && !op.known {
			o.Return = math.MaxInt64
		} else if !op.write {
			o.Output = op.value
		}
		out = append(out, o)
	}
	return out
}

// checkLinearizable fails t unless the history is linearizable; on
// failure it writes porcupine's visualization and names the file.
func checkLinearizable(t *testing.T, ops []regOp) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(registerModel, porcupineHistory(ops), 30*time.Second)
	switch res {
	case porcupine.Ok:
		return
	case porcupine.Unknown:
		t.Fatalf("the linearizability check timed out (%d operations)", len(ops))
	}
	path := filepath.Join(os.TempDir(), fmt.Sprintf("quire-linearizability-%d.html", time.Now().UnixNano()))
	if err := porcupine.VisualizePath(registerModel, info, path); err != nil {
		t.Logf("visualize: %v", err)
	}
	t.Fatalf("the history of %d operations is not linearizable (see %s)", len(ops), path)
}

// sessionViolations checks the API reads of each client (ops of one
// client in its order, on the one node it is bound to) against every
// write: no read returns a value nobody wrote before it returned; a read
// never returns a value that was overwritten, in real time, before the
// client's own last acknowledged write of that key (read-your-writes),
// or before the value it read last time (monotonic reads). "Overwritten
// in real time": the write of the value returned before the write it is
// compared with was called, so every linearization orders it first.
func sessionViolations(writes []regOp, clients [][]regOp) []string {
	byValue := map[string]regOp{}
	for _, w := range writes {
		byValue[w.value] = w
	}
	// before reports whether value a is surely older than the write b.
	before := func(a string, b regOp) bool {
		if a == initValue {
			return true
		}
		wa, ok := byValue[a]
		return ok && wa.known && wa.ret < b.call
	}
	var bad []string
	for c, ops := range clients {
		ownWrite := map[int]regOp{}  // key → last acknowledged write
		lastRead := map[int]string{} // key → last value read
		for _, op := range ops {
			if op.write {
				if op.known {
					ownWrite[op.key] = op
				}
				continue
			}
			if op.value != initValue {
				w, ok := byValue[op.value]
				if !ok || w.call > op.ret {
					bad = append(bad, fmt.Sprintf("client %d read k%d = %q, which no write had made", c, op.key, op.value))
					continue
				}
			}
			if w, ok := ownWrite[op.key]; ok && op.value != w.value && before(op.value, w) {
				bad = append(bad, fmt.Sprintf("client %d read k%d = %q after its own acknowledged write of %q", c, op.key, op.value, w.value))
			}
			if prev, ok := lastRead[op.key]; ok && prev != initValue && op.value != prev && before(op.value, byValue[prev]) {
				bad = append(bad, fmt.Sprintf("client %d read k%d = %q after reading the newer %q", c, op.key, op.value, prev))
			}
			lastRead[op.key] = op.value
		}
	}
	return bad
}

// TestLinearizability_CheckersRejectBadHistories: the model and the
// session check can fail. Hand-made histories that break
// linearizability or the session guarantees are rejected, and their
// legal neighbours are accepted.
func TestLinearizability_CheckersRejectBadHistories(t *testing.T) {
	w := func(v string, call, ret int64, known bool) regOp {
		return regOp{write: true, value: v, call: call, ret: ret, known: known}
	}
	r := func(v string, call, ret int64) regOp { return regOp{value: v, call: call, ret: ret} }
	for _, tc := range []struct {
		name string
		ops  []regOp
		ok   bool
	}{
		{"stale read after an acknowledged write", []regOp{w("a", 0, 10, true), r(initValue, 20, 30)}, false},
		{"read of an overwritten value", []regOp{w("a", 0, 10, true), w("b", 20, 30, true), r("a", 40, 50)}, false},
		{"read of a value never written", []regOp{w("a", 0, 10, true), r("zzz", 20, 30)}, false},
		{"reads going back in time", []regOp{w("a", 0, 10, true), w("b", 0, 10, true), r("b", 20, 30), r("a", 40, 50)}, false},
		{"a lost acknowledged write", []regOp{w("a", 0, 10, true), r("a", 20, 30), w("b", 40, 50, true), r("a", 60, 70)}, false},
		{"the newest value", []regOp{w("a", 0, 10, true), w("b", 20, 30, true), r("b", 40, 50)}, true},
		{"concurrent writes read either way", []regOp{w("a", 0, 30, true), w("b", 10, 20, true), r("a", 40, 50), r("a", 60, 70)}, true},
		{"an unknown write that took effect late", []regOp{w("a", 0, 10, true), w("u", 5, 6, false), r("a", 20, 30), r("u", 40, 50)}, true},
		{"an unknown write that never took effect", []regOp{w("a", 0, 10, true), w("u", 5, 6, false), r("a", 20, 30)}, true},
	} {
		if got := porcupine.CheckOperations(registerModel, porcupineHistory(tc.ops)); got != tc.ok {
			t.Errorf("%s: linearizable = %v, want %v", tc.name, got, tc.ok)
		}
	}

	// Session checks on one client's API reads.
	writes := []regOp{w("a", 0, 10, true), w("b", 20, 30, true), w("c", 25, 200, true), w("u", 40, 41, false)}
	for _, tc := range []struct {
		name   string
		client []regOp
		ok     bool
	}{
		{"own write then an older value", []regOp{w("b", 20, 30, true), r("a", 40, 50)}, false},
		{"own write then the initial value", []regOp{w("b", 20, 30, true), r(initValue, 40, 50)}, false},
		{"newer then older", []regOp{r("b", 40, 50), r("a", 60, 70)}, false},
		{"a value nobody wrote", []regOp{r("zzz", 40, 50)}, false},
		{"a value read before its write began", []regOp{r("u", 30, 35)}, false},
		{"stale but moving forward", []regOp{r(initValue, 40, 50), r("a", 60, 70), r("b", 80, 90)}, true},
		{"own write then a concurrent one", []regOp{w("b", 20, 30, true), r("c", 40, 50), r("b", 60, 70)}, true},
		{"an unknown write seen", []regOp{r("u", 45, 50)}, true},
	} {
		if bad := sessionViolations(writes, [][]regOp{tc.client}); (len(bad) == 0) != tc.ok {
			t.Errorf("%s: violations %q, want ok = %v", tc.name, bad, tc.ok)
		}
	}
}

// TestLinearizability_RegistersUnderPartitionsAndLeaderKills runs the
// register workload through every node's API while the leader is cut
// off, a follower is cut off, the leader is stopped and restarted, and
// the next leader is stopped; then checks the history.
func TestLinearizability_RegistersUnderPartitionsAndLeaderKills(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	f := newFabric(t)
	srvs := startFabricCluster(t, f)
	nodes := make([]*node.Node, len(srvs)) // kept: Close clears Server.Node
	toks := make([]string, len(srvs))
	ids, raftAddrs := make([]string, len(srvs)), make([]string, len(srvs))
	for i, s := range srvs {
		nodes[i], toks[i] = s.Node, s.Admin()
		ids[i], raftAddrs[i] = s.Node.Cluster.ID(), s.Node.Cluster.Addr()
	}
	const nKeys = 3
	docs := make([]string, nKeys)
	for k := range docs {
		d := newTaggedDoc()
		body := map[string]any{"documentId": d.id, "content": "r", "tags": []map[string]any{{"key": "reg", "value": initValue}}}
		if st, b, err := apiCall(srvs[0], http.MethodPost, "/documents", body, toks[0], 15*time.Second); st != http.StatusCreated {
			t.Fatalf("create register %d: %d %s %v", k, st, b, err)
		}
		docs[k] = d.id
	}
	converged(t, srvs)

	t0 := time.Now()
	now := func() int64 { return time.Since(t0).Nanoseconds() }
	var (
		stop    atomic.Bool
		mu      sync.Mutex // guards hist, clients, statuses
		hist    []regOp    // writes and barrier reads
		writes  []regOp
		clients [][]regOp // each client's writes and API reads
		status  = map[string]int{}
		acked   atomic.Int64
		// deadMu is held for reading while a barrier read uses a node,
		// and for writing while one is stopped.
		deadMu sync.RWMutex
		dead   = make([]bool, len(srvs))
		wg     sync.WaitGroup
	)
	// client runs one client's session against server i until the run
	// stops or the node is stopped.
	client := func(c, i int, s *quiretest.Server, tok string) {
		defer wg.Done()
		rng := rand.New(rand.NewSource(int64(c)))
		for seq := 0; !stop.Load(); seq++ {
			deadMu.RLock()
			gone := dead[i]
			deadMu.RUnlock()
			if gone {
				return
			}
			k := rng.Intn(nKeys)
			path := "/documents/" + docs[k] + "/tags/reg"
			if rng.Intn(2) == 0 {
				v := fmt.Sprintf("c%d-%d", c, seq)
				op := regOp{client: c, key: k, write: true, value: v, call: now()}
				st, _, err := apiCall(s, http.MethodPut, path, map[string]any{"value": v}, tok, 3*time.Second)
				op.ret, op.known = now(), err == nil && st == http.StatusOK
				if op.known {
					acked.Add(1)
				}
				mu.Lock()
				hist, writes = append(hist, op), append(writes, op)
				clients[c] = append(clients[c], op)
				status[fmt.Sprintf("PUT %d %v", st, err != nil)]++
				mu.Unlock()
				continue
			}
			op := regOp{client: c, key: k, call: now()}
			st, b, err := apiCall(s, http.MethodGet, path, nil, tok, 3*time.Second)
			op.ret = now()
			var tag struct {
				Value *string `json:"value"`
			}
			if err != nil || st != http.StatusOK || json.Unmarshal(b, &tag) != nil || tag.Value == nil {
				mu.Lock()
				status[fmt.Sprintf("GET %d %v", st, err != nil)]++
				mu.Unlock()
				continue // a failed read has no effect
			}
			op.value = *tag.Value
			mu.Lock()
			clients[c] = append(clients[c], op)
			status["GET 200"]++
			mu.Unlock()
		}
	}
	// startClient starts a new session (a new client id) on server i.
	startClient := func(i int) {
		mu.Lock()
		c := len(clients)
		clients = append(clients, nil)
		mu.Unlock()
		wg.Add(1)
		go client(c, i, srvs[i], toks[i])
	}
	for c := range 4 {
		startClient(c % len(srvs))
	}
	const readerID = 99 // the barrier reader's client id
	// barrierRead reads key k linearizably at whichever live node leads
	// (false: none could).
	barrierRead := func(client, k int) (regOp, bool) {
		deadMu.RLock()
		defer deadMu.RUnlock()
		for i, n := range nodes {
			if dead[i] || !n.Cluster.IsLeader() {
				continue
			}
			op := regOp{client: client, key: k, call: now()}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := n.Cluster.Barrier(ctx)
			cancel()
			if err != nil {
				continue
			}
			tg, err := n.DB.GetTag("default", docs[k], "reg")
			if err != nil {
				t.Errorf("barrier read of k%d on %s: %v", k, n.Cluster.ID(), err)
				return op, false
			}
			op.value, op.ret = tg.Value, now()
			return op, true
		}
		return regOp{}, false
	}
	var barrierReads atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			op, ok := barrierRead(readerID, i%nKeys)
			if !ok {
				time.Sleep(20 * time.Millisecond) // no leader yet: poll
				continue
			}
			barrierReads.Add(1)
			mu.Lock()
			hist = append(hist, op)
			mu.Unlock()
		}
	}()

	// The faults, each phase lasting until some writes were acknowledged.
	progress := func(what string, n int64) {
		t.Helper()
		target := acked.Load() + n
		waitFor(t, fmt.Sprintf("%d acknowledged writes (%s)", n, what), 30*time.Second, func() bool { return acked.Load() >= target })
	}
	live := func() []*quiretest.Server {
		var out []*quiretest.Server
		for i, s := range srvs {
			if !dead[i] {
				out = append(out, s)
			}
		}
		return out
	}
	progress("start", 25)

	old := leaderAmong(srvs)
	if old == nil {
		t.Fatal("no leader")
	}
	oldID := old.Node.Cluster.ID()
	f.isolate(oldID, linkBlackhole)
	waitFor(t, "a leader in the majority", 20*time.Second, func() bool {
		l := leaderAmong(srvs)
		return l != nil && l != old
	})
	progress("leader cut off", 20)
	f.healAll()
	waitFor(t, oldID+" to follow", 20*time.Second, func() bool {
		st := old.Node.Cluster.Status()
		return st.State == "Follower" && st.LeaderID != "" && st.LeaderID != oldID
	})
	progress("healed", 10)

	var follower *quiretest.Server
	waitFor(t, "a leader", 20*time.Second, func() bool { return leaderAmong(srvs) != nil })
	for _, s := range srvs {
		if !s.Node.Cluster.IsLeader() {
			follower = s
			break
		}
	}
	f.isolate(follower.Node.Cluster.ID(), linkRefuse)
	progress("follower cut off", 20)
	f.healAll()
	progress("healed", 10)

	// Leader kills: the leader is stopped; it restarts on its data and
	// Raft address and catches up under load (a new client session on
	// it); then the next leader is stopped.
	kill := func() int {
		t.Helper()
		var victim *quiretest.Server
		waitFor(t, "a leader", 20*time.Second, func() bool { victim = leaderAmong(srvs); return victim != nil })
		i := slices.Index(srvs, victim)
		deadMu.Lock()
		dead[i] = true
		victim.Close()
		deadMu.Unlock()
		waitFor(t, "a leader among the survivors", 20*time.Second, func() bool { return leaderAmong(live()) != nil })
		return i
	}
	first := kill()
	progress("leader stopped", 20)

	waitFor(t, "the stopped node's Raft port to be free", 10*time.Second, func() bool {
		ln, err := net.Listen("tcp", raftAddrs[first])
		if err == nil {
			ln.Close()
		}
		return err == nil
	})
	back := quiretest.StartServer(t, srvs[first].DataDir, viaFabricAt(f, ids[first], raftAddrs[first]))
	deadMu.Lock()
	srvs[first], nodes[first], toks[first], dead[first] = back, back.Node, back.Admin(), false
	deadMu.Unlock()
	waitFor(t, ids[first]+" to rejoin", 20*time.Second, func() bool {
		l := leaderAmong(live())
		return l != nil && back.Node.Cluster.AppliedIndex() >= l.Node.Cluster.AppliedIndex()
	})
	startClient(first)
	progress("restarted", 15)
	kill()
	progress("second leader stopped", 15)

	stop.Store(true)
	wg.Wait()
	// Final barrier reads: every acknowledged write is in them, in its
	// place.
	for k := range nKeys {
		var op regOp
		waitFor(t, "a final barrier read", 20*time.Second, func() bool {
			var ok bool
			op, ok = barrierRead(readerID, k)
			return ok
		})
		hist = append(hist, op)
	}
	converged(t, live())

	unknown := 0
	for _, w := range writes {
		if !w.known {
			unknown++
		}
	}
	apiReads := 0
	for _, ops := range clients {
		apiReads += len(ops)
	}
	apiReads -= len(writes)
	t.Logf("%d writes (%d acknowledged, %d unknown), %d barrier reads, %d API reads by %d client sessions in %v; answers %v",
		len(writes), acked.Load(), unknown, barrierReads.Load()+nKeys, apiReads, len(clients), time.Since(t0).Round(time.Millisecond), status)
	if barrierReads.Load() == 0 || apiReads == 0 {
		t.Fatal("the workload read nothing")
	}
	start := time.Now()
	checkLinearizable(t, hist)
	t.Logf("porcupine: linearizable (%v)", time.Since(start).Round(time.Millisecond))
	if bad := sessionViolations(writes, clients); len(bad) > 0 {
		t.Fatalf("session guarantees broken (%d): %q", len(bad), bad[:min(len(bad), 10)])
	}
}
