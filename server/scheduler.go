package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"quire/guard"
	"quire/server/internal/api"
	"quire/storage"
)

// realClock is Deps.Now with the runtime's timers.
type realClock struct{ now func() time.Time }

func (c realClock) Now() time.Time                         { return c.now() }
func (c realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Job is a daily job. Run does the job for day (YYYY-MM-DD, UTC) at now;
// its effects must be idempotent commands: a run repeated for the same
// day (after a crash before the day's mark) must change nothing twice.
type Job struct {
	Name string
	Run  func(ctx context.Context, day string, now time.Time) error
}

// Scheduler runs daily jobs on the leader (DESIGN.md "Retention and the
// scheduler"). Once a day, and at once when it starts, it runs every job
// that has no mark for the current UTC day, then writes the mark
// (OpMarkJobRun) through the applier, after the job's effects. A job that
// failed is retried after retryEvery; a job with a mark never runs again
// for that day, on this node or on any other, across restarts and
// failovers.
type Scheduler struct {
	db    *storage.DB
	ap    storage.Applier
	clock api.Clock
	log   *slog.Logger
	jobs  []Job

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// schedulerRetry is how soon a failed job is tried again.
const schedulerRetry = 10 * time.Minute

// NewScheduler returns a stopped scheduler of jobs.
func NewScheduler(db *storage.DB, ap storage.Applier, clock api.Clock, log *slog.Logger, jobs ...Job) *Scheduler {
	return &Scheduler{db: db, ap: ap, clock: clock, log: log, jobs: jobs}
}

// Start starts the scheduler (no-op when it runs).
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		guard.Do(s.log, guard.Background, func() { s.loop(ctx) })
	}(s.done)
}

// Stop stops the scheduler and waits for a job under way to see its
// context cancelled and return (no-op when stopped).
func (s *Scheduler) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

func (s *Scheduler) loop(ctx context.Context) {
	for {
		now := s.clock.Now().UTC()
		failed := s.RunDue(ctx, now)
		y, m, d := now.Date()
		wait := time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC).Sub(now)
		if failed && wait > schedulerRetry {
			wait = schedulerRetry
		}
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(wait):
		}
	}
}

// RunDue runs, for now's UTC day, each job without a mark, then marks it.
// It reports whether a job failed (it is tried again later that day).
func (s *Scheduler) RunDue(ctx context.Context, now time.Time) (failed bool) {
	day := now.UTC().Format(time.DateOnly)
	for _, j := range s.jobs {
		if ctx.Err() != nil {
			return true
		}
		_, err := s.db.JobRan(j.Name, day)
		if err == nil {
			continue
		}
		if !errors.Is(err, storage.ErrNotFound) {
			s.log.Warn("scheduler: read job mark", "job", j.Name, "day", day, "err", err)
			failed = true
			continue
		}
		if err := j.Run(ctx, day, now); err != nil {
			s.log.Warn("scheduler: job failed", "job", j.Name, "day", day, "err", err)
			failed = true
			continue
		}
		cmd, err := storage.NewCommand(storage.OpMarkJobRun, "", "scheduler", now, storage.JobRun{Job: j.Name, Day: day})
		if err == nil {
			_, err = s.ap.Apply(context.Background(), cmd)
		}
		// A conflict: another leader marked the day first (its run and
		// this one had the same idempotent effects).
		if err != nil && !errors.Is(err, storage.ErrConflict) {
			s.log.Warn("scheduler: mark job run", "job", j.Name, "day", day, "err", err)
			failed = true
			continue
		}
		s.log.Info("scheduler: job ran", "job", j.Name, "day", day)
	}
	return failed
}

// newScheduler is the server's scheduler with its daily jobs.
func (s *Server) newScheduler() *Scheduler {
	c := s.Deps.Clock
	if c == nil {
		c = realClock{now: s.Deps.Now}
	}
	return NewScheduler(s.DB, s.Deps.Applier, c, s.Deps.Logger.With("component", "scheduler"), dispositionJob(s.DB, s.Deps.Applier),
		remindersJob(s.DB, s.Deps.Applier), agreementsJob(s.DB, s.Deps.Applier))
}
