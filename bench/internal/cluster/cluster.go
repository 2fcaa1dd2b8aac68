package cluster

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

	quirecluster "quire/cluster"
	"quire/node"
	"quire/storage"

	"quire/bench/internal/harness"
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
	ca, err := quirecluster.LoadCA(quirecluster.TLSDir(node.ClusterDir(firstDir)))
	if err != nil {
		return err
	}
	tok, err := ca.IssueJoinToken(time.Hour)
	if err != nil {
		return err
	}
	tlsDir := quirecluster.TLSDir(node.ClusterDir(dir))
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		return err
	}
	csr, err := quirecluster.NewNodeKey(tlsDir, id)
	if err != nil {
		return err
	}
	b, err := ca.Redeem(tok, csr)
	if err != nil {
		return err
	}
	return quirecluster.SaveNodeCert(tlsDir, b, ca.Fingerprint())
}

// startTrio starts a three-node cluster under root: n1 bootstraps, n2
// and n3 are added by whoever leads. The caller closes the nodes.
func startTrio(ctx context.Context, root string) ([]*harness.Inproc, error) {
	var nodes []*harness.Inproc
	fail := func(err error) ([]*harness.Inproc, error) {
		for _, p := range nodes {
			p.Close()
		}
		return nil, err
	}
	for i, id := range []string{"n1", "n2", "n3"} {
		dir := filepath.Join(root, id)
		if i > 0 {
			if err := provisionNode(nodes[0].Dir, dir, id); err != nil {
				return fail(fmt.Errorf("provision %s: %w", id, err))
			}
		}
		p, err := harness.StartInproc(dir, node.ClusterConfig{NodeID: id, RaftListen: "127.0.0.1:0", Bootstrap: i == 0,
			Tune: func(c *quirecluster.Config) { c.RaftLogOutput = io.Discard }})
		if err != nil {
			return fail(fmt.Errorf("start %s: %w", id, err))
		}
		nodes = append(nodes, p)
		if i == 0 {
			if err := waitUntil(ctx, "n1 to lead", 30*time.Second, p.Node.Cluster.IsLeader); err != nil {
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
				if q.Node.Cluster.IsLeader() {
					joinErr = q.Node.Cluster.Join(id, p.Node.Cluster.Addr())
					break
				}
			}
			return joinErr == nil
		}); err != nil {
			return fail(fmt.Errorf("join %s: %w (%v)", id, err, joinErr))
		}
		if err := waitUntil(ctx, id+" to know a leader", 30*time.Second, func() bool {
			_, lid := p.Node.Cluster.LeaderAddr()
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
	if s.Cfg.Quick {
		n = clusterIngestDocsQuick
	}
	size := s.Cfg.UploadSize
	seed := harness.UploadSeed()
	s.Logf("hashing the %s upload stream", harness.SizeName(size))
	h := sha256.New()
	if _, err := io.CopyBuffer(h, harness.RandomStream(seed, size), make([]byte, harness.CopyBuf)); err != nil {
		return err
	}
	sum := h.Sum(nil)

	// Single node: ingest, then the upload.
	root := filepath.Join(s.Root, "cluster-bench")
	defer os.RemoveAll(root)
	s.Logf("single node (in process): %d clients, %d documents", s.Cfg.Clients, n)
	one, err := harness.StartInproc(filepath.Join(root, "single"), node.ClusterConfig{})
	if err != nil {
		return err
	}
	cpu0, _ := harness.ReadCPU(os.Getpid())
	single, err := harness.QuireCount(ctx, one.Server, s.Cfg, n)
	cpu1, _ := harness.ReadCPU(os.Getpid())
	var singleUp harness.TransferResult
	if err == nil {
		s.Logf("single node: upload %s", harness.SizeName(size))
		singleUp, err = harness.QuireUpload(ctx, one.Server, size, seed)
	}
	one.Close()
	os.RemoveAll(filepath.Join(root, "single"))
	if err != nil {
		return fmt.Errorf("single node: %w", err)
	}

	s.Logf("three nodes (in process): forming the cluster")
	nodes, err := startTrio(ctx, filepath.Join(root, "trio"))
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range nodes {
			p.Close()
		}
	}()
	s.Logf("three nodes: %d clients over the three nodes, %d documents", s.Cfg.Clients, n)
	var ops []harness.LoadOp
	for _, p := range nodes {
		ops = append(ops, harness.CreateOp(p.Server, s.Cfg, "c", nil, nil))
	}
	stopProf := s.startProfile("ingest")
	cpu2, _ := harness.ReadCPU(os.Getpid())
	trio := harness.RunCount(ctx, s.Cfg.Clients, n, func(ctx context.Context, w, i int) error { return ops[w%len(ops)](ctx, w, i) })
	cpu3, _ := harness.ReadCPU(os.Getpid())
	stopProf()
	if err := trio.Err(); err != nil {
		return fmt.Errorf("three nodes ingest: %w", err)
	}
	ratio := trio.Rate() / single.Rate()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("3-node ingest %d x %s docs, %d clients", n, harness.SizeName(int64(s.Cfg.DocSize)), s.Cfg.Clients),
		Quire:    fmt.Sprintf("%.0f docs/s", trio.Rate()),
		Baseline: fmt.Sprintf("%.0f docs/s", single.Rate()),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", clusterIngestTarget),
		Status:   harness.Status(ratio >= clusterIngestTarget),
	})
	s.Rep.Note("3-node ingest: clients spread over the three nodes (two thirds forwarded by a follower), p50 %s p99 %s, %d errors; single node p50 %s p99 %s (baseline: the same load on one in-process node)",
		harness.Millis(trio.Percentile(0.5)), harness.Millis(trio.Percentile(0.99)), trio.Errors, harness.Millis(single.Percentile(0.5)), harness.Millis(single.Percentile(0.99)))
	if trio.FirstErr != nil {
		s.Rep.Note("3-node ingest: first error: %v", trio.FirstErr)
	}
	// The nodes share this machine's cores: each document is handled,
	// applied and indexed by all three, so CPU per document tells the
	// cluster's own overhead apart from the hardware it shares.
	perDoc := func(d time.Duration, r harness.LoadResult) float64 {
		return d.Seconds() * 1000 / float64(max(r.Ops, 1))
	}
	one1, three := perDoc(cpu1-cpu0, single), perDoc(cpu3-cpu2, trio)
	s.Rep.Note("3-node ingest CPU (the benchmark process: clients and nodes): %.2f ms per document on three nodes, %.2f on one (%.1f×; three full replicas cost 3× at least); cores busy %.2f and %.2f of %d",
		three, one1, three/max(one1, 0.001), (cpu3-cpu2).Seconds()/max(trio.Window.Seconds(), 0.001), (cpu1-cpu0).Seconds()/max(single.Window.Seconds(), 0.001), runtime.NumCPU())

	s.Logf("three nodes: upload %s through a follower", harness.SizeName(size))
	// n1 leads unless the load above moved the leadership (a leader
	// change under load): pick a node that follows now.
	f := nodes[1]
	for _, p := range nodes {
		if !p.Node.Cluster.IsLeader() {
			f = p
			break
		}
	}
	stopProf = s.startProfile("upload")
	up, err := harness.QuireUpload(ctx, f.Server, size, seed)
	stopProf()
	if err != nil {
		return fmt.Errorf("upload through a follower: %w", err)
	}
	ratio = up.Rate / singleUp.Rate
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:     fmt.Sprintf("3-node upload %s through a follower (PUT)", harness.SizeName(size)),
		Quire:    fmt.Sprintf("%.1f MB/s", up.Rate),
		Baseline: fmt.Sprintf("%.1f MB/s", singleUp.Rate),
		Ratio:    fmt.Sprintf("%.2f", ratio),
		Target:   fmt.Sprintf(">= %.1f", clusterUploadTarget),
		Status:   harness.Status(ratio >= clusterUploadTarget),
	})
	s.Rep.Note("3-node upload: PUT to a follower's (%s) upload URL, one command per 1 MiB chunk forwarded to the leader, commit last; took %s; baseline: the same PUT to a single in-process node, %s",
		f.Node.Cluster.ID(), up.Elapsed.Round(time.Millisecond), singleUp.Elapsed.Round(time.Millisecond))
	// Every node is read once it has applied what the upload's node had
	// when its PUT answered (the commit included: read-your-writes on the
	// node written through). Not n1's own index: n1 need not lead any
	// more, and then it may lag behind the commit (cluster/DESIGN.md,
	// "Reads are local"), which made this row fail with "contentLength is
	// 0" on n1 after a leader change during the ingest.
	idx := f.Node.Cluster.AppliedIndex()
	for _, p := range nodes {
		if p.Node.Cluster.IsLeader() {
			idx = max(idx, p.Node.Cluster.AppliedIndex())
		}
	}
	var readBack error
	for _, p := range nodes {
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := p.Node.Cluster.WaitApplied(wctx, idx)
		cancel()
		if err == nil {
			_, err = harness.VerifyUpload(ctx, p.Server, up.DocumentID, size, sum)
		}
		if err != nil {
			readBack = errors.Join(readBack, fmt.Errorf("%s: %w", p.Node.Cluster.ID(), err))
		}
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "  3-node upload read-back on every node", Quire: map[bool]string{true: "match", false: "MISMATCH"}[readBack == nil],
		Baseline: "-", Ratio: "-", Target: "match", Status: harness.Status(readBack == nil)})
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
func (s *session) digestRow(ctx context.Context, nodes []*harness.Inproc) error {
	var leader *harness.Inproc
	if err := waitUntil(ctx, "a leader", 30*time.Second, func() bool {
		for _, p := range nodes {
			if p.Node.Cluster.IsLeader() {
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
	idx, err := leader.Node.Cluster.MarkDigest(dctx)
	if err != nil {
		return fmt.Errorf("replica digest: %w", err)
	}
	var ds []storage.Digest
	for _, p := range nodes {
		d, err := p.Node.Cluster.Digest(dctx, idx)
		if err != nil {
			return fmt.Errorf("replica digest of %s: %w", p.Node.Cluster.ID(), err)
		}
		ds = append(ds, d)
	}
	equal := true
	for _, d := range ds[1:] {
		equal = equal && d.SHA256 == ds[0].SHA256
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{Name: "3-node replica digests at the end (documents, versions, tags, attributes, content hashes)",
		Quire: map[bool]string{true: "equal", false: "DIFFER"}[equal], Baseline: "-", Ratio: "-", Target: "equal", Status: harness.Status(equal)})
	s.Rep.Note("replica digests at index %d: %d documents, %d keys; walk %s / %s / %s on the three members",
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
func (s *session) failover(ctx context.Context, nodes []*harness.Inproc) error {
	s.Logf("three nodes: failover")
	li := -1 // n1 leads unless the load above moved the leadership
	for i, p := range nodes {
		if p.Node.Cluster.IsLeader() {
			li = i
		}
	}
	if li < 0 {
		return errors.New("failover: no leader")
	}
	leader, f, o := nodes[li], nodes[(li+1)%3], nodes[(li+2)%3]
	id := leader.Node.Cluster.ID()
	op := harness.CreateOp(f.Server, s.Cfg, "failover", nil, nil)
	// Writes go through before the kill.
	if err := op(ctx, 0, 0); err != nil {
		return fmt.Errorf("failover: write before the kill: %w", err)
	}
	// Writers on both followers, with and without an Idempotency-Key,
	// through the fault (the exactly-once rows).
	fw := startFaultWriters(ctx, "leader", []*harness.Server{f.Server, o.Server})
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	leader.Node.Cluster.Close() // Raft shut down: no leadership transfer, no leave
	took, tries, err := firstAck(ctx, op, t0)
	if err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	_, lid := f.Node.Cluster.LeaderAddr()
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name: "3-node failover: leader killed → first acknowledged write", Quire: harness.Millis(took), Baseline: "-", Ratio: "-",
		Target: "< " + harness.Millis(failoverTarget), Status: harness.Status(took < failoverTarget),
	})
	time.Sleep(2 * time.Second) // the writers go on under the new leader
	fw.finish()
	if err := s.faultRows(ctx, "leader kill", fw, nodes, leader); err != nil {
		return err
	}
	s.Rep.Note("failover: the leader's Raft member shut down (no transfer, no leave); a client wrote through a follower every 10 ms (%d attempts, each up to 2 s); new leader %s. Raft timing: heartbeat timeout 1 s, election timeout 1 s (randomized up to 2 s), leader lease 500 ms (hashicorp/raft defaults, cluster.Config)", tries, lid)
	s.Rep.Note("a leader's pause (SIGSTOP) cannot be made inside this process (the nodes share it): it is measured by node's TestCluster_ExactlyOnceThroughKillsAndPauses only (cluster/DESIGN.md, \"Exactly-once writes\")")

	// The old leader comes back on its data dir (as a restart after a
	// kill would) before a follower is killed: two members stay up.
	raftAddr := leader.Node.Cluster.Addr()
	leader.Close()
	t1 := time.Now()
	back, err := reopenInproc(ctx, leader.Dir, id, raftAddr, nodes)
	if err != nil {
		return fmt.Errorf("failover: reopening %s: %w", id, err)
	}
	nodes[li] = back
	s.Rep.Note("failover: %s (the old leader) reopened on its data dir and caught up with the new leader in %s", id, harness.Millis(time.Since(t1)))
	return s.followerKill(ctx, nodes)
}

// followerKill shuts a follower's Raft member down without a leave and
// closes it (as if killed) while writers write through the leader and the
// other follower, reports the time to the first write acknowledged
// through the other follower, then reopens the follower on its data dir
// and reports the time until it has applied the leader's index.
func (s *session) followerKill(ctx context.Context, nodes []*harness.Inproc) error {
	s.Logf("three nodes: follower kill")
	li := -1
	for i, p := range nodes {
		if p.Node.Cluster.IsLeader() {
			li = i
		}
	}
	if li < 0 {
		return errors.New("follower kill: no leader")
	}
	fi, oi := (li+1)%3, (li+2)%3 // the follower killed, the other follower
	victim := nodes[fi]
	id := victim.Node.Cluster.ID()
	op := harness.CreateOp(nodes[oi].Server, s.Cfg, "followerkill", nil, nil)
	if err := op(ctx, 0, 0); err != nil {
		return fmt.Errorf("follower kill: write before the kill: %w", err)
	}
	fw := startFaultWriters(ctx, "follower", []*harness.Server{nodes[li].Server, nodes[oi].Server})
	time.Sleep(500 * time.Millisecond)
	raftAddr := victim.Node.Cluster.Addr()
	t0 := time.Now()
	victim.Node.Cluster.Close() // Raft shut down: no leave
	victim.Close()
	took, _, err := firstAck(ctx, op, t0)
	if err != nil {
		return fmt.Errorf("follower kill: %w", err)
	}
	time.Sleep(time.Second)
	t1 := time.Now()
	back, err := reopenInproc(ctx, victim.Dir, id, raftAddr, nodes)
	if err != nil {
		return fmt.Errorf("follower kill: reopening %s: %w", id, err)
	}
	nodes[fi] = back
	recovered := time.Since(t1)
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name: "3-node follower killed → first acknowledged write / reopened follower caught up", Quire: harness.Millis(took) + " / " + harness.Millis(recovered), Baseline: "-", Ratio: "-",
		Target: "< " + harness.Millis(failoverTarget), Status: harness.Status(took < failoverTarget && recovered < failoverTarget),
	})
	time.Sleep(time.Second) // the writers go on with three members again
	fw.finish()
	if err := s.faultRows(ctx, "follower kill", fw, nodes, nil); err != nil {
		return err
	}
	s.Rep.Note("follower kill: %s's Raft member shut down (no leave) and the node closed while writers wrote through the leader and the other follower; it was reopened on its data dir 1 s later", id)
	return nil
}

// firstAck writes with op every 10 ms (each try up to 2 s) until one is
// acknowledged, and returns the time since t0 and the tries.
func firstAck(ctx context.Context, op harness.LoadOp, t0 time.Time) (time.Duration, int, error) {
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
func reopenInproc(ctx context.Context, dir, id, raftAddr string, nodes []*harness.Inproc) (*harness.Inproc, error) {
	p, err := harness.StartInproc(dir, node.ClusterConfig{NodeID: id, RaftListen: raftAddr,
		Tune: func(c *quirecluster.Config) { c.RaftLogOutput = io.Discard }})
	if err != nil {
		return nil, err
	}
	var lidx uint64
	if err := waitUntil(ctx, id+" to know the leader", 30*time.Second, func() bool {
		_, lid := p.Node.Cluster.LeaderAddr()
		for _, q := range nodes {
			if q != nil && q.Node != nil && q.Node.Cluster.ID() == lid && lid != id {
				lidx = q.Node.Cluster.AppliedIndex()
				return true
			}
		}
		return false
	}); err != nil {
		p.Close()
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.Node.Cluster.WaitApplied(wctx, lidx); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s catching up: %w", id, err)
	}
	return p, nil
}

// faultRows reports what the writers of one fault saw: the keyed ones'
// errors, failed logical writes, duplicates and lost acknowledged writes
// (counted on a node that applied the leader's index), and the plain
// ones' errors. down is a node whose Raft member is shut down (nil: none).
func (s *session) faultRows(ctx context.Context, fault string, fw *faultWriters, nodes []*harness.Inproc, down *harness.Inproc) error {
	var leader, other *harness.Inproc
	for _, p := range nodes {
		if p == nil || p.Node == nil || p == down {
			continue
		}
		if p.Node.Cluster.IsLeader() {
			leader = p
		} else if other == nil {
			other = p
		}
	}
	if leader == nil || other == nil {
		return fmt.Errorf("%s: counting the writers' documents: no leader and follower up", fault)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := other.Node.Cluster.WaitApplied(wctx, leader.Node.Cluster.AppliedIndex())
	cancel()
	var dups, lost int
	if err == nil {
		dups, lost, err = fw.duplicates(ctx, other.Server)
	}
	if err != nil {
		return fmt.Errorf("%s: counting the writers' documents: %w", fault, err)
	}
	// The history on every member (issue 44): what the writers were
	// acknowledged is on each live member, as many times as on the one
	// counted above.
	var differ []string
	for _, p := range nodes {
		if p == nil || p.Node == nil || p == down || p == other {
			continue
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := p.Node.Cluster.WaitApplied(wctx, leader.Node.Cluster.AppliedIndex())
		cancel()
		d, l := 0, 0
		if err == nil {
			d, l, err = fw.duplicates(ctx, p.Server)
		}
		if err != nil || d != dups || l != lost {
			differ = append(differ, fmt.Sprintf("%s: %d duplicates, %d lost, %v", p.Node.Cluster.ID(), d, l, err))
		}
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:  "  " + fault + ", history on every live member (acknowledged writes present, same counts)",
		Quire: map[bool]string{true: "same", false: "DIFFER"}[len(differ) == 0], Baseline: "-", Ratio: "-",
		Target: "same", Status: harness.Status(len(differ) == 0),
	})
	if len(differ) > 0 {
		s.Rep.Note("%s: members that differ from %s: %v", fault, other.Node.Cluster.ID(), differ)
	}
	keyedErrs := sum(fw.keyedErrs)
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:  "  " + fault + ", writers with Idempotency-Key: errors seen / failed / duplicates / lost",
		Quire: fmt.Sprintf("%d / %d / %d / %d", keyedErrs, fw.keyedFail, dups, lost), Baseline: "-", Ratio: "-",
		Target: "0 / 0 / 0 / 0", Status: harness.Status(keyedErrs == 0 && fw.keyedFail == 0 && dups == 0 && lost == 0),
	})
	plainBad := 0
	for k, v := range fw.plainErrs {
		if k != "503" && k != "504" {
			plainBad += v
		}
	}
	s.Rep.Rows = append(s.Rep.Rows, harness.Row{
		Name:  "  " + fault + ", writers without a key: errors (503 no leader, 504 unknown) / other",
		Quire: fmt.Sprintf("%d / %d", sum(fw.plainErrs), plainBad), Baseline: "-", Ratio: "-",
		Target: "other 0", Status: harness.Status(plainBad == 0),
	})
	s.Rep.Note("%s writers (one with and one without an Idempotency-Key on each of two nodes, a new path per logical write): keyed %d acknowledged, answers retried: %s; without a key %d acknowledged, errors: %s; duplicates count documents of one logical write beyond the first, on %s after it applied the leader's index",
		fault, fw.keyedAcks, countsString(fw.keyedErrs), fw.plainAcks, countsString(fw.plainErrs), other.Node.Cluster.ID())
	return nil
}

// startProfile starts a CPU profile of one cluster row when -cpuprofile
// is given; the function it returns stops it.
func (s *session) startProfile(row string) func() {
	if s.Cfg.CPUProfile == "" {
		return func() {}
	}
	f, err := os.Create(s.Cfg.CPUProfile + "." + row)
	if err != nil {
		s.Logf("cpuprofile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		s.Logf("cpuprofile: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
