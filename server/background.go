package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"quire/guard"
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// SetLeader starts (true) or stops (false) the work that decides or
// schedules for the whole store: the daily scheduler (nightly
// disposition), the retention sweeps, the watched intake folders, the rescan of
// content type detections and the resumption of pending folder moves. A
// cluster runs it on the leader only (node's leader loop calls this as
// leadership changes); a single server is always its own leader. Before
// the first call none of it runs. Stopping cancels the folder moves this
// server resumed and waits for them (each stays pending: the next leader
// resumes it); a sweep under way finishes its current command.
// Detection of this server's own uploads runs on every node: it is
// deterministic and recorded as a command, so running it anywhere is safe.
func (s *Server) SetLeader(leader bool) {
	if leader {
		if !s.bg.leader.Swap(true) {
			s.bg.sweepRetention()
			s.bg.rescanNow()
			s.search.Moves.Lead()
			s.sched.Start()
			s.intake.Watch.Start()
			go s.signatures.ResumeSignedEnvelopes(context.Background())
		}
		return
	}
	if s.bg.leader.Swap(false) {
		s.sched.Stop()
		s.intake.Watch.Stop()
		s.search.Moves.StepDown()
	}
}

// background detects content types of uploads that came without one
// (SERVICE-SPEC.md §1: detection is asynchronous), and on the leader
// sweeps retention. Pending detections are recorded in storage, so the
// ones a restart interrupted are picked up again by the leader's rescan.
type background struct {
	s      *Server
	ch     chan storage.PendingDetection
	retain chan struct{} // runs the retention sweep now
	rescan chan struct{} // looks at pending detections now
	leader atomic.Bool   // the retention sweep and the rescan run
	done   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

func newBackground(s *Server) *background {
	return &background{s: s, ch: make(chan storage.PendingDetection, 1024), retain: make(chan struct{}, 1),
		rescan: make(chan struct{}, 1), done: make(chan struct{})}
}

// rescanNow asks for a look at pending detections.
func (b *background) rescanNow() {
	select {
	case b.rescan <- struct{}{}:
	default:
	}
}

func (b *background) start() {
	b.once.Do(func() {
		b.wg.Add(1)
		go b.run()
	})
}

func (b *background) stop() {
	select {
	case <-b.done:
	default:
		close(b.done)
	}
	b.wg.Wait()
}

// detect queues a detection; when the queue is full the job is left to
// the periodic rescan of storage.
func (b *background) detect(p storage.PendingDetection) {
	select {
	case b.ch <- p:
	default:
	}
}

// sweepRetention asks for a retention sweep (a site's retention changed).
func (b *background) sweepRetention() {
	select {
	case b.retain <- struct{}{}:
	default:
	}
}

// retentionEvery is how often soft-deleted documents past their site's
// retention are purged.
const retentionEvery = 10 * time.Minute

func (b *background) run() {
	defer b.wg.Done()
	rescan := time.NewTicker(time.Minute)
	defer rescan.Stop()
	retention := time.NewTicker(retentionEvery)
	defer retention.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-retention.C:
			if b.leader.Load() {
				b.do(b.s.documents.PurgeExpired)
				b.do(b.s.content.SweepExamines)
				b.do(b.s.documents.SweepArchives)
				// Jobs a member started and left behind when it stopped.
				b.do(b.s.search.Moves.Resume)
			}
		case <-b.retain:
			if b.leader.Load() {
				b.do(b.s.documents.PurgeExpired)
			}
		case p := <-b.ch:
			b.do(func() { b.detectOne(p) })
		case <-rescan.C:
			b.rescanNow()
		case <-b.rescan:
			if !b.leader.Load() {
				continue
			}
			b.do(func() {
				pending, err := b.s.DB.PendingDetections(256)
				if err != nil {
					b.s.Log.Warn("list pending content type detections", "err", err)
				}
				for _, p := range pending {
					b.detectOne(p)
				}
			})
		}
	}
}

// do runs one task of the loop: a panic fails that task, not the loop (a
// detection left pending is retried by the next rescan).
func (b *background) do(task func()) { guard.Do(b.s.Log, guard.Background, task) }

func (b *background) detectOne(p storage.PendingDetection) {
	ctype := "application/octet-stream"
	rd, _, err := b.s.DB.OpenContent(p.Site, p.DocumentID)
	if err == nil {
		head, rerr := storage.ReadAllSmall(rd, 8192)
		rd.Close()
		if rerr == nil {
			ctype = documents.DetectContentType(head)
		}
	}
	cmd, err := storage.NewCommand(storage.OpSetContentType, p.Site, "", b.s.Now().UTC(), storage.SetContentType{
		DocumentID: p.DocumentID, ContentSHA: p.ContentSHA, ContentType: ctype,
	})
	if err != nil {
		return
	}
	if _, err := b.s.Deps.Applier.Apply(context.Background(), cmd); err != nil && !api.IsNotFound(err) {
		b.s.Log.Warn("store detected content type", "err", err)
	}
}
