package pipeline

// Delivery of document events (storage/events.go; API.md "Document
// events"). The pipeline runs it while it runs its workers, so in a
// cluster only the leader delivers. The outbox is the store's: each pass
// reads it oldest first, posts each event to each target still owed it
// and records what was taken with OpEventsDelivered. A target that fails
// waits (RetryBase, doubling, at most EventMaxBackoff) and keeps its
// events in order; its later events wait with it. An event a target has
// not taken within EventMaxAge of its time is given up for that target.
// What was posted but not yet recorded when the process stopped is posted
// again: at least once, with the same event id.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"quire/guard"
	"quire/pipeline/webhook"
	"quire/storage"
)

// Bounds of event delivery.
const (
	// EventMaxAge is how long a target is tried for an event.
	EventMaxAge = 24 * time.Hour
	// EventMaxBackoff bounds the wait between tries of a failing target.
	EventMaxBackoff = 10 * time.Minute
	// eventScan bounds the outbox entries one pass reads; eventBatch the
	// events one pass posts to one target; eventTargets the targets
	// posted to at once.
	eventScan    = 10000
	eventBatch   = 64
	eventTargets = 8
)

// EventStats counts event deliveries since the process started (metrics
// quire_events_*).
type EventStats struct {
	Delivered, Failed, Dropped uint64
	// Pending is the number of outbox events at the last pass (at most
	// the pass's scan bound).
	Pending int
}

type eventCounters struct {
	delivered, failed, dropped atomic.Uint64
	pending                    atomic.Int64
}

// EventStats reports the delivery counters.
func (p *Pipeline) EventStats() EventStats {
	return EventStats{Delivered: p.evc.delivered.Load(), Failed: p.evc.failed.Load(), Dropped: p.evc.dropped.Load(),
		Pending: int(p.evc.pending.Load())}
}

// onEventCommit wakes the delivery loop when a command wrote events.
func (p *Pipeline) onEventCommit(_ *storage.Command, res storage.Result) {
	if res.Events > 0 {
		select {
		case p.evWake <- struct{}{}:
		default:
		}
	}
}

// errGiveUp marks a target that will never take an event: the
// subscription is gone or no longer takes the type, the bus is not
// configured, the outbound policy refuses the destination.
type errGiveUp struct{ error }

// eventLoop delivers events until stopping is closed.
func (p *Pipeline) eventLoop(ctx context.Context, stopping <-chan struct{}) {
	defer p.wg.Done()
	if !p.registerBuses(ctx, stopping) {
		return
	}
	backoff := map[string]*targetWait{}
	for {
		var next time.Time
		guard.Do(p.log, guard.Pipeline, func() { next = p.eventPass(ctx, backoff) })
		var timer <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(max(next.Sub(p.cfg.Now()), time.Millisecond))
			timer = t.C
		}
		select {
		case <-stopping:
		case <-p.evWake:
		case <-timer:
		}
		if t != nil {
			t.Stop()
		}
		select {
		case <-stopping:
			return
		default:
		}
	}
}

// registerBuses records the configured event bus names, so events are
// written for them, when the store holds others; it tries again until it
// succeeds or the pipeline stops.
func (p *Pipeline) registerBuses(ctx context.Context, stopping <-chan struct{}) bool {
	want := make([]string, 0, len(p.cfg.Engines.EventBuses))
	for name := range p.cfg.Engines.EventBuses {
		want = append(want, name)
	}
	slices.Sort(want)
	for {
		have, err := p.db.EventBuses()
		if err == nil && slices.Equal(have, want) {
			return true
		}
		if err == nil {
			_, err = p.apply.Apply(ctx, storage.MustCommand(storage.OpSetEventBuses, "", "system", p.cfg.Now(), storage.SetEventBuses{Names: want}))
			if err == nil {
				return true
			}
		}
		p.log.Warn("events: register the event buses", "err", err)
		select {
		case <-stopping:
			return false
		case <-time.After(p.cfg.RetryBase):
		}
	}
}

type targetWait struct {
	fails int
	next  time.Time
}

type targetRun struct {
	target string
	events []*storage.Event
	failed bool
	// recorded: events taken off the outbox for this target.
	recorded int
}

// eventPass posts what is owed to targets that are not waiting and
// returns when to look again (zero: at the next event written).
func (p *Pipeline) eventPass(ctx context.Context, backoff map[string]*targetWait) time.Time {
	now := p.cfg.Now()
	work := map[string]*targetRun{}
	var order []string
	var earliest time.Time
	more, pending := false, 0
	err := p.db.PendingEvents(eventScan, func(e *storage.Event) bool {
		pending++
		for _, tg := range e.Targets {
			if w := backoff[tg]; w != nil && now.Before(w.next) {
				if earliest.IsZero() || w.next.Before(earliest) {
					earliest = w.next
				}
				continue
			}
			r := work[tg]
			if r == nil {
				if len(order) == eventTargets {
					more = true
					continue
				}
				r = &targetRun{target: tg}
				work[tg] = r
				order = append(order, tg)
			}
			if len(r.events) == eventBatch {
				more = true
				continue
			}
			r.events = append(r.events, e)
		}
		return true
	})
	p.evc.pending.Store(int64(pending))
	if err != nil {
		p.log.Warn("events: read the outbox", "err", err)
		return now.Add(p.cfg.RetryBase)
	}
	var wg sync.WaitGroup
	for _, tg := range order {
		wg.Add(1)
		go func(r *targetRun) {
			defer wg.Done()
			guard.Do(p.log, guard.Pipeline, func() { p.deliverTarget(ctx, r) }, "target", r.target)
		}(work[tg])
	}
	wg.Wait()
	for _, tg := range order {
		r := work[tg]
		// Something was recorded: look again at once (the pending count,
		// and what may have been written meanwhile).
		more = more || r.recorded > 0
		if !r.failed {
			delete(backoff, tg)
			continue
		}
		w := backoff[tg]
		if w == nil {
			w = &targetWait{}
			backoff[tg] = w
		}
		w.fails++
		d := min(p.cfg.RetryBase<<min(w.fails-1, 20), EventMaxBackoff)
		w.next = p.cfg.Now().Add(d)
		if earliest.IsZero() || w.next.Before(earliest) {
			earliest = w.next
		}
	}
	if more {
		return p.cfg.Now()
	}
	return earliest
}

// deliverTarget posts r's events in order until one fails, then records
// those taken (or given up).
func (p *Pipeline) deliverTarget(ctx context.Context, r *targetRun) {
	var done []storage.EventDelivery
	for _, e := range r.events {
		err := p.deliverEvent(ctx, r.target, e)
		var give errGiveUp
		switch {
		case err == nil:
			p.evc.delivered.Add(1)
		case errors.As(err, &give):
			p.evc.dropped.Add(1)
			p.log.Warn("events: given up", "target", r.target, "event", e.ID, "err", err)
		case p.cfg.Now().Sub(e.Time) > EventMaxAge:
			p.evc.failed.Add(1)
			p.evc.dropped.Add(1)
			p.log.Warn("events: given up after EventMaxAge", "target", r.target, "event", e.ID, "err", err)
		default:
			p.evc.failed.Add(1)
			p.log.Info("events: not delivered, will retry", "target", r.target, "event", e.ID, "err", err)
			r.failed = true
		}
		if r.failed {
			break
		}
		done = append(done, storage.EventDelivery{Key: e.Key, Target: r.target})
	}
	if len(done) == 0 {
		return
	}
	if _, err := p.apply.Apply(ctx, storage.MustCommand(storage.OpEventsDelivered, "", "system", p.cfg.Now(), storage.EventsDelivered{Items: done})); err != nil {
		// Posted but not recorded: posted again later (at least once).
		p.log.Warn("events: record deliveries", "target", r.target, "err", err)
		r.failed = true
		return
	}
	r.recorded = len(done)
}

// deliverEvent posts e to one target.
func (p *Pipeline) deliverEvent(ctx context.Context, target string, e *storage.Event) error {
	kind, name, _ := strings.Cut(target, ":")
	client, url := webhook.BusClient, ""
	switch kind {
	case "sub":
		s, err := p.db.GetEventSubscription(e.Site, name)
		if errors.Is(err, storage.ErrNotFound) {
			return errGiveUp{fmt.Errorf("subscription %s is gone", name)}
		}
		if err != nil {
			return err
		}
		if len(s.EventTypes) > 0 && !slices.Contains(s.EventTypes, e.Type) {
			return errGiveUp{fmt.Errorf("subscription %s no longer takes %s", name, e.Type)}
		}
		client, url = p.userHTTP, s.URL
	case "bus":
		url = p.cfg.Engines.EventBuses[name]
		if url == "" {
			return errGiveUp{fmt.Errorf("event bus '%s' is not configured", name)}
		}
	default:
		return errGiveUp{fmt.Errorf("unknown target %q", target)}
	}
	body, err := e.CloudEvent()
	if err != nil {
		return errGiveUp{err}
	}
	_, err = p.post(ctx, client, url, "application/cloudevents+json", body)
	if err != nil && errors.As(err, new(webhook.RefusedError)) {
		return errGiveUp{err}
	}
	return err
}
