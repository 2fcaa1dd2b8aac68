package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"quire/cluster"
	"quire/node"
	"quire/storage"
)

// The cluster benchmarks (go run ./bench -cluster-only runs them alone):
//
//   - ingest: cfg.clients clients create documents on a three-node cluster
//     (spread over the three nodes: followers forward to the leader) beside
//     the same load on a single node, in the same run;
//   - upload: a streamed upload through a follower's upload URL beside the
//     same upload to a single node; every node's copy is read back and
//     hashed;
//   - failover: the leader's Raft member is shut down without a leadership
//     transfer (as if killed) while a client writes through a follower; the
//     time until the first write acknowledged by the new leader; then the
//     old leader is reopened on its data dir and a follower is killed the
//     same way and reopened. Per fault, writers with and without an
//     Idempotency-Key report errors, failed writes, duplicates and losses.
//     A pause (SIGSTOP) cannot be made in process: node's
//     TestCluster_ExactlyOnceThroughKillsAndPauses measures it.
//
// The nodes run inside the benchmark process (through the node package,
// each on its own loopback API and Raft port, with certificates issued by
// the first node's cluster CA as node/cluster_test.go does): forming a
// cluster of bin/quire processes needs the HTTP join, which this build
// does not have yet (serve --join is refused). The single-node baseline
// runs in process too, so both sides pay the same client and GC costs.
const (
	clusterIngestTarget    = 0.5             // cluster docs/s / single-node docs/s
	clusterUploadTarget    = 0.5             // cluster MB/s / single-node MB/s
	failoverTarget         = 5 * time.Second // leader gone → first acknowledged write
	clusterIngestDocs      = 6000
	clusterIngestDocsQuick = 2000
)

// waitUntil polls cond every 20 ms until it holds or d passes.
func waitUntil(ctx context.Context, what string, d time.Duration, cond func() bool) error {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// provisionNode gives the new data dir dir the certificate of node id,
// traded for a join token at the first node's CA (what POST /cluster/join
// will do).
func provisionNode(firstDir, dir, id string) error {
	ca, err := cluster.LoadCA(cluster.TLSDir(node.ClusterDir(firstDir)))
	if err != nil {
		return err
	}
	tok, err := ca.IssueJoinToken(time.Hour)
	if err != nil {
		return err
	}
	tlsDir := cluster.TLSDir(node.ClusterDir(dir))
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return err
	}
	csr, err := cluster.NewNodeKey(tlsDir, id)
	if err != nil {
		return err
	}
	b, err := ca.Redeem(tok, csr)
	if err != nil {
		return err
	}
	return cluster.SaveNodeCert(tlsDir, b, ca.Fingerprint())
}

// startTrio starts a three-node cluster under root: n1 bootstraps, n2
// and n3 are added by whoever leads. The caller closes the nodes.
func startTrio(ctx context.Context, root string) ([]*inproc, error) {
	var nodes []*inproc
	fail := func(err error) ([]*inproc, error) {
		for _, p := range nodes {
			p.close()
		}
		return nil, err
	}
	for i, id := range []string{"n1", "n2", "n3"} {
		dir := filepath.Join(root, id)
		if i > 0 {
			if err := provisionNode(nodes[0].dir, dir, id); err != nil {
				return fail(fmt.Errorf("provision %s: %w", id, err))
			}
		}
		p, err := startInproc(dir, node.ClusterConfig{NodeID: id, RaftListen: "127.0.0.1:0", Bootstrap: i == 0,
			Tune: func(c *cluster.Config) { c.RaftLogOutput = io.Discard }})
		if err != nil {
			return fail(fmt.Errorf("start %s: %w", id, err))
		}
		nodes = append(nodes, p)
		if i == 0 {
			if err := waitUntil(ctx, "n1 to lead", 30*time.Second, p.n.Cluster.IsLeader); err != nil {
				return fail(err)
			}
			continue
		}
		// Whoever leads adds the node: on a busy machine the lead can
		// move during a join (a two-voter configuration needs the new
		// node's answers), and Join leaves a member with the same id and
		// address alone, so a join made again does not add it twice.
		var joinErr error
		if err := waitUntil(ctx, "a leader to add "+id, 60*time.Second, func() bool {
			joinErr = errors.New("no leader")
			for _, q := range nodes {
				if q.n.Cluster.IsLeader() {
					joinErr = q.n.Cluster.Join(id, p.n.Cluster.Addr())
					break
				}
			}
			return joinErr == nil
		}); err != nil {
			return fail(fmt.Errorf("join %s: %w (%v)", id, err, joinErr))
		}
		if err := waitUntil(ctx, id+" to know a leader", 30*time.Second, func() bool {
			_, lid := p.n.Cluster.LeaderAddr()
			return lid != ""
		}); err != nil {
			return fail(err)
		}
	}
	return nodes, nil
}

// clusterBench runs the cluster benchmarks.
func (s *session) clusterBench(ctx context.Context) error {
	n := clusterIngestDocs
	if s.cfg.quick {
		n = clusterIngestDocsQuick
	}
	size := s.cfg.uploadSize
	seed := uploadSeed()
	s.logf("hashing the %s upload stream", sizeName(size))
	h := sha256.New()
	if _, err := io.CopyBuffer(h, randomStream(seed, size), make([]byte, copyBuf)); err != nil {
		return err
	}
	sum := h.Sum(nil)

	// Single node: ingest, then the upload.
	root := filepath.Join(s.root, "cluster-bench")
	defer os.RemoveAll(root)
	s.logf("single node (in process): %d clients, %d documents", s.cfg.clients, n)
	one, err := startInproc(filepath.Join(root, "single"), node.ClusterConfig{})
	if err != nil {
		return err
	}
	cpu0, _ := readCPU(os.Getpid())
	single, err := quireCount(ctx, one.srv, s.cfg, n)
	cpu1, _ := readCPU(os.Getpid())
	var singleUp transferResult
	if err == nil {
		s.logf("single node: upload %s", sizeName(size))
		singleUp, err = quireUpload(ctx, one.srv, size, seed)
	}
	one.close()
	os.RemoveAll(filepath.Join(root, "single"))
	if err != nil {
		return fmt.Errorf("single node: %w", err)
	}

	s.logf("three nodes (in process): forming the cluster")
	nodes, err := startTrio(ctx, filepath.Join(root, "trio"))
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range nodes {
			p.close()
		}
	}()
	s.logf("three nodes: %d clients over the three nodes, %d documents", s.cfg.clients, n)
	var ops []loadOp
	for _, p := range nodes {
		ops = append(ops, createOp(p.srv, s.cfg, "c", nil, nil))
	}
	stopProf := s.startProfile("ingest")
	cpu2, _ := readCPU(os.Getpid())
	trio := runCount(ctx, s.cfg.clients, n, func(ctx context.Context, w, i int) error { return ops[w%len(ops)](ctx, w, i) })
	cpu3, _ := readCPU(os.Getpid())
	stopProf()
	if err := trio.err(); err != nil {
		return fmt.Errorf("three nodes ingest: %w", err)
	}
	ratio := trio.rate() / single.rate()
	s.rep.rows = append(s.rep.rows, row{
		name:     fmt.Sprintf("3-node ingest %d x %s docs, %d clients", n, sizeName(int64(s.cfg.docSize)), s.cfg.clients),
		quire:    fmt.Sprintf("%.0f docs/s", trio.rate()),
		baseline: fmt.Sprintf("%.0f docs/s", single.rate()),
		ratio:    fmt.Sprintf("%.2f", ratio),
		target:   fmt.Sprintf(">= %.1f", clusterIngestTarget),
		status:   status(ratio >= clusterIngestTarget),
	})
	s.rep.note("3-node ingest: clients spread over the three nodes (two thirds forwarded by a follower), p50 %s p99 %s, %d errors; single node p50 %s p99 %s (baseline: the same load on one in-process node)",
		millis(trio.percentile(0.5)), millis(trio.percentile(0.99)), trio.errors, millis(single.percentile(0.5)), millis(single.percentile(0.99)))
	if trio.firstErr != nil {
		s.rep.note("3-node ingest: first error: %v", trio.firstErr)
	}
	// The nodes share this machine's cores: each document is handled,
	// applied and indexed by all three, so CPU per document tells the
	// cluster's own overhead apart from the hardware it shares.
	perDoc := func(d time.Duration, r loadResult) float64 { return d.Seconds() * 1000 / float64(max(r.ops, 1)) }
	one1, three := perDoc(cpu1-cpu0, single), perDoc(cpu3-cpu2, trio)
	s.rep.note("3-node ingest CPU (the benchmark process: clients and nodes): %.2f ms per document on three nodes, %.2f on one (%.1f×; three full replicas cost 3× at least); cores busy %.2f and %.2f of %d",
		three, one1, three/max(one1, 0.001), (cpu3-cpu2).Seconds()/max(trio.window.Seconds(), 0.001), (cpu1-cpu0).Seconds()/max(single.window.Seconds(), 0.001), runtime.NumCPU())

	s.logf("three nodes: upload %s through a follower", sizeName(size))
	// n1 leads unless the load above moved the leadership (a leader
	// change under load): pick a node that follows now.
	f := nodes[1]
	for _, p := range nodes {
		if !p.n.Cluster.IsLeader() {
			f = p
			break
		}
	}
	stopProf = s.startProfile("upload")
	up, err := quireUpload(ctx, f.srv, size, seed)
	stopProf()
	if err != nil {
		return fmt.Errorf("upload through a follower: %w", err)
	}
	ratio = up.rate / singleUp.rate
	s.rep.rows = append(s.rep.rows, row{
		name:     fmt.Sprintf("3-node upload %s through a follower (PUT)", sizeName(size)),
		quire:    fmt.Sprintf("%.1f MB/s", up.rate),
		baseline: fmt.Sprintf("%.1f MB/s", singleUp.rate),
		ratio:    fmt.Sprintf("%.2f", ratio),
		target:   fmt.Sprintf(">= %.1f", clusterUploadTarget),
		status:   status(ratio >= clusterUploadTarget),
	})
	s.rep.note("3-node upload: PUT to a follower's (%s) upload URL, one command per 1 MiB chunk forwarded to the leader, commit last; took %s; baseline: the same PUT to a single in-process node, %s",
		f.n.Cluster.ID(), up.elapsed.Round(time.Millisecond), singleUp.elapsed.Round(time.Millisecond))
	// Every node is read once it has applied what the upload's node had
	// when its PUT answered (the commit included: read-your-writes on the
	// node written through). Not n1's own index: n1 need not lead any
	// more, and then it may lag behind the commit (cluster/DESIGN.md,
	// "Reads are local"), which made this row fail with "contentLength is
	// 0" on n1 after a leader change during the ingest.
	idx := f.n.Cluster.AppliedIndex()
	for _, p := range nodes {
		if p.n.Cluster.IsLeader() {
			idx = max(idx, p.n.Cluster.AppliedIndex())
		}
	}
	var readBack error
	for _, p := range nodes {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := p.n.Cluster.WaitApplied(wctx, idx)
		cancel()
		if err == nil {
			_, err = verifyUpload(ctx, p.srv, up.documentID, size, sum)
		}
		if err != nil {
			readBack = errors.Join(readBack, fmt.Errorf("%s: %w", p.n.Cluster.ID(), err))
		}
	}
	s.rep.rows = append(s.rep.rows, row{name: "  3-node upload read-back on every node", quire: map[bool]string{true: "match", false: "MISMATCH"}[readBack == nil],
		baseline: "-", ratio: "-", target: "match", status: status(readBack == nil)})
	// A read-back mismatch fails the run, after the failover rows (the
	// row above already says MISS).
	err = s.failover(ctx, nodes)
	if readBack != nil {
		err = errors.Join(fmt.Errorf("3-node upload read-back: %w", readBack), err)
	}
	if err == nil {
		err = s.digestRow(ctx, nodes)
	}
	return err
}

// digestRow has the leader take a replica digest of every member at one
// index after all the rows above (cluster/DESIGN.md, "Replicas proven
// equal") and reports whether they are equal, and how long a member's
// walk of its store took.
func (s *session) digestRow(ctx context.Context, nodes []*inproc) error {
	var leader *inproc
	if err := waitUntil(ctx, "a leader", 30*time.Second, func() bool {
		for _, p := range nodes {
			if p.n.Cluster.IsLeader() {
				leader = p
				return true
			}
		}
		return false
	}); err != nil {
		return err
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	idx, err := leader.n.Cluster.MarkDigest(dctx)
	if err != nil {
		return fmt.Errorf("replica digest: %w", err)
	}
	var ds []storage.Digest
	for _, p := range nodes {
		d, err := p.n.Cluster.Digest(dctx, idx)
		if err != nil {
			return fmt.Errorf("replica digest of %s: %w", p.n.Cluster.ID(), err)
		}
		ds = append(ds, d)
	}
	equal := true
	for _, d := range ds[1:] {
		equal = equal && d.SHA256 == ds[0].SHA256
	}
	s.rep.rows = append(s.rep.rows, row{name: "3-node replica digests at the end (documents, versions, tags, attributes, content hashes)",
		quire: map[bool]string{true: "equal", false: "DIFFER"}[equal], baseline: "-", ratio: "-", target: "equal", status: status(equal)})
	s.rep.note("replica digests at index %d: %d documents, %d keys; walk %s / %s / %s on the three members",
		idx, ds[0].Documents, ds[0].Keys, ds[0].Took.Round(time.Millisecond), ds[1].Took.Round(time.Millisecond), ds[2].Took.Round(time.Millisecond))
	if !equal {
		return fmt.Errorf("replica digests differ at index %d: %s %s %s", idx, ds[0].SHA256, ds[1].SHA256, ds[2].SHA256)
	}
	return nil
}

// failover shuts the leader's Raft member down without a transfer while a
// client writes through a follower, and reports the time from the
// shutdown to the first acknowledged write; then it reopens the old
// leader on its data dir and does the same to a follower (followerKill).
func (s *session) failover(ctx context.Context, nodes []*inproc) error {
	s.logf("three nodes: failover")
	li := -1 // n1 leads unless the load above moved the leadership
	for i, p := range nodes {
		if p.n.Cluster.IsLeader() {
			li = i
		}
	}
	if li < 0 {
		return errors.New("failover: no leader")
	}
	leader, f, o := nodes[li], nodes[(li+1)%3], nodes[(li+2)%3]
	id := leader.n.Cluster.ID()
	op := createOp(f.srv, s.cfg, "failover", nil, nil)
	// Writes go through before the kill.
	if err := op(ctx, 0, 0); err != nil {
		return fmt.Errorf("failover: write before the kill: %w", err)
	}
	// Writers on both followers, with and without an Idempotency-Key,
	// through the fault (the exactly-once rows).
	fw := startFaultWriters(ctx, "leader", []*server{f.srv, o.srv})
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	leader.n.Cluster.Close() // Raft shut down: no leadership transfer, no leave
	took, tries, err := firstAck(ctx, op, t0)
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	_, lid := f.n.Cluster.LeaderAddr()
	s.rep.rows = append(s.rep.rows, row{
		name: "3-node failover: leader killed → first acknowledged write", quire: millis(took), baseline: "-", ratio: "-",
		target: "< " + millis(failoverTarget), status: status(took < failoverTarget),
	})
	time.Sleep(2 * time.Second) // the writers go on under the new leader
	fw.finish()
	if err := s.faultRows(ctx, "leader kill", fw, nodes, leader); err != nil {
		return err
	}
	s.rep.note("failover: the leader's Raft member shut down (no transfer, no leave); a client wrote through a follower every 10 ms (%d attempts, each up to 2 s); new leader %s. Raft timing: heartbeat timeout 1 s, election timeout 1 s (randomized up to 2 s), leader lease 500 ms (hashicorp/raft defaults, cluster.Config)", tries, lid)
	s.rep.note("a leader's pause (SIGSTOP) cannot be made inside this process (the nodes share it): it is measured by node's TestCluster_ExactlyOnceThroughKillsAndPauses only (cluster/DESIGN.md, \"Exactly-once writes\")")

	// The old leader comes back on its data dir (as a restart after a
	// kill would) before a follower is killed: two members stay up.
	raftAddr := leader.n.Cluster.Addr()
	leader.close()
	t1 := time.Now()
	back, err := reopenInproc(ctx, leader.dir, id, raftAddr, nodes)
	if err != nil {
		return fmt.Errorf("failover: reopening %s: %w", id, err)
	}
	nodes[li] = back
	s.rep.note("failover: %s (the old leader) reopened on its data dir and caught up with the new leader in %s", id, millis(time.Since(t1)))
	return s.followerKill(ctx, nodes)
}

// followerKill shuts a follower's Raft member down without a leave and
// closes it (as if killed) while writers write through the leader and the
// other follower, reports the time to the first write acknowledged
// through the other follower, then reopens the follower on its data dir
// and reports the time until it has applied the leader's index.
func (s *session) followerKill(ctx context.Context, nodes []*inproc) error {
	s.logf("three nodes: follower kill")
	li := -1
	for i, p := range nodes {
		if p.n.Cluster.IsLeader() {
			li = i
		}
	}
	if li < 0 {
		return errors.New("follower kill: no leader")
	}
	fi, oi := (li+1)%3, (li+2)%3 // the follower killed, the other follower
	victim := nodes[fi]
	id := victim.n.Cluster.ID()
	op := createOp(nodes[oi].srv, s.cfg, "followerkill", nil, nil)
	if err := op(ctx, 0, 0); err != nil {
		return fmt.Errorf("follower kill: write before the kill: %w", err)
	}
	fw := startFaultWriters(ctx, "follower", []*server{nodes[li].srv, nodes[oi].srv})
	time.Sleep(500 * time.Millisecond)
	raftAddr := victim.n.Cluster.Addr()
	t0 := time.Now()
	victim.n.Cluster.Close() // Raft shut down: no leave
	victim.close()
	took, _, err := firstAck(ctx, op, t0)
	if err != nil {
		return fmt.Errorf("follower kill: %w", err)
	}
	time.Sleep(time.Second)
	t1 := time.Now()
	back, err := reopenInproc(ctx, victim.dir, id, raftAddr, nodes)
	if err != nil {
		return fmt.Errorf("follower kill: reopening %s: %w", id, err)
	}
	nodes[fi] = back
	recovered := time.Since(t1)
	s.rep.rows = append(s.rep.rows, row{
		name: "3-node follower killed → first acknowledged write / reopened follower caught up", quire: millis(took) + " / " + millis(recovered), baseline: "-", ratio: "-",
		target: "< " + millis(failoverTarget), status: status(took < failoverTarget && recovered < failoverTarget),
	})
	time.Sleep(time.Second) // the writers go on with three members again
	fw.finish()
	if err := s.faultRows(ctx, "follower kill", fw, nodes, nil); err != nil {
		return err
	}
	s.rep.note("follower kill: %s's Raft member shut down (no leave) and the node closed while writers wrote through the leader and the other follower; it was reopened on its data dir 1 s later", id)
	return nil
}

// firstAck writes with op every 10 ms (each try up to 2 s) until one is
// acknowledged, and returns the time since t0 and the tries.
func firstAck(ctx context.Context, op loadOp, t0 time.Time) (time.Duration, int, error) {
	for i := 1; ; i++ {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := op(wctx, 0, i)
		cancel()
		if err == nil {
			return time.Since(t0), i, nil
		}
		if time.Since(t0) > time.Minute {
			return 0, i, fmt.Errorf("no write acknowledged within a minute: %w", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reopenInproc opens node id again on its data dir with its Raft
// address, and waits until it knows the leader and has applied the
// leader's index.
func reopenInproc(ctx context.Context, dir, id, raftAddr string, nodes []*inproc) (*inproc, error) {
	p, err := startInproc(dir, node.ClusterConfig{NodeID: id, RaftListen: raftAddr,
		Tune: func(c *cluster.Config) { c.RaftLogOutput = io.Discard }})
	if err != nil {
		return nil, err
	}
	var lidx uint64
	if err := waitUntil(ctx, id+" to know the leader", 30*time.Second, func() bool {
		_, lid := p.n.Cluster.LeaderAddr()
		for _, q := range nodes {
			if q != nil && q.n != nil && q.n.Cluster.ID() == lid && lid != id {
				lidx = q.n.Cluster.AppliedIndex()
				return true
			}
		}
		return false
	}); err != nil {
		p.close()
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.n.Cluster.WaitApplied(wctx, lidx); err != nil {
		p.close()
		return nil, fmt.Errorf("%s catching up: %w", id, err)
	}
	return p, nil
}

// faultRows reports what the writers of one fault saw: the keyed ones'
// errors, failed logical writes, duplicates and lost acknowledged writes
// (counted on a node that applied the leader's index), and the plain
// ones' errors. down is a node whose Raft member is shut down (nil: none).
func (s *session) faultRows(ctx context.Context, fault string, fw *faultWriters, nodes []*inproc, down *inproc) error {
	var leader, other *inproc
	for _, p := range nodes {
		if p == nil || p.n == nil || p == down {
			continue
		}
		if p.n.Cluster.IsLeader() {
			leader = p
		} else if other == nil {
			other = p
		}
	}
	if leader == nil || other == nil {
		return fmt.Errorf("%s: counting the writers' documents: no leader and follower up", fault)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := other.n.Cluster.WaitApplied(wctx, leader.n.Cluster.AppliedIndex())
	cancel()
	var dups, lost int
	if err == nil {
		dups, lost, err = fw.duplicates(ctx, other.srv)
	}
	if err != nil {
		return fmt.Errorf("%s: counting the writers' documents: %w", fault, err)
	}
	// The history on every member (issue 44): what the writers were
	// acknowledged is on each live member, as many times as on the one
	// counted above.
	var differ []string
	for _, p := range nodes {
		if p == nil || p.n == nil || p == down || p == other {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := p.n.Cluster.WaitApplied(wctx, leader.n.Cluster.AppliedIndex())
		cancel()
		d, l := 0, 0
		if err == nil {
			d, l, err = fw.duplicates(ctx, p.srv)
		}
		if err != nil || d != dups || l != lost {
			differ = append(differ, fmt.Sprintf("%s: %d duplicates, %d lost, %v", p.n.Cluster.ID(), d, l, err))
		}
	}
	s.rep.rows = append(s.rep.rows, row{
		name:  "  " + fault + ", history on every live member (acknowledged writes present, same counts)",
		quire: map[bool]string{true: "same", false: "DIFFER"}[len(differ) == 0], baseline: "-", ratio: "-",
		target: "same", status: status(len(differ) == 0),
	})
	if len(differ) > 0 {
		s.rep.note("%s: members that differ from %s: %v", fault, other.n.Cluster.ID(), differ)
	}
	keyedErrs := sum(fw.keyedErrs)
	s.rep.rows = append(s.rep.rows, row{
		name:  "  " + fault + ", writers with Idempotency-Key: errors seen / failed / duplicates / lost",
		quire: fmt.Sprintf("%d / %d / %d / %d", keyedErrs, fw.keyedFail, dups, lost), baseline: "-", ratio: "-",
		target: "0 / 0 / 0 / 0", status: status(keyedErrs == 0 && fw.keyedFail == 0 && dups == 0 && lost == 0),
	})
	plainBad := 0
	for k, v := range fw.plainErrs {
		if k != "503" && k != "504" {
			plainBad += v
		}
	}
	s.rep.rows = append(s.rep.rows, row{
		name:  "  " + fault + ", writers without a key: errors (503 no leader, 504 unknown) / other",
		quire: fmt.Sprintf("%d / %d", sum(fw.plainErrs), plainBad), baseline: "-", ratio: "-",
		target: "other 0", status: status(plainBad == 0),
	})
	s.rep.note("%s writers (one with and one without an Idempotency-Key on each of two nodes, a new path per logical write): keyed %d acknowledged, answers retried: %s; without a key %d acknowledged, errors: %s; duplicates count documents of one logical write beyond the first, on %s after it applied the leader's index",
		fault, fw.keyedAcks, countsString(fw.keyedErrs), fw.plainAcks, countsString(fw.plainErrs), other.n.Cluster.ID())
	return nil
}

// startProfile starts a CPU profile of one cluster row when -cpuprofile
// is given; the function it returns stops it.
func (s *session) startProfile(row string) func() {
	if s.cfg.cpuProfile == "" {
		return func() {}
	}
	f, err := os.Create(s.cfg.cpuProfile + "." + row)
	if err != nil {
		s.logf("cpuprofile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		s.logf("cpuprofile: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
