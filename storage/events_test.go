package storage

import (
	"testing"
	"time"
)

// TestEvents_FromTheLog: the same commands applied to two stores (a
// replay) write the same events with the same ids; a change with no
// target writes none; the deliveries of the last target delete the
// event, and recording them again changes nothing.
func TestEvents_FromTheLog(t *testing.T) {
	t.Parallel() // own store, no package or process state
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	run := func(d *DB) []Event {
		addDoc(t, d, "default", "11111111-1111-4111-8111-111111111111", "none.txt", t0) // no target yet
		mustApply(t, d, OpPutEventSubscription, "default", t0, PutEventSubscription{ID: "s1", Create: true, URL: "http://127.0.0.1:9/x", EventTypes: []string{EventCreated, EventDeleted}})
		mustApply(t, d, OpSetEventBuses, "", t0, SetEventBuses{Names: []string{"office"}})
		addDoc(t, d, "default", "22222222-2222-4222-8222-222222222222", "a.txt", t0.Add(time.Second))
		addDoc(t, d, "other", "33333333-3333-4333-8333-333333333333", "b.txt", t0.Add(time.Second))
		var evs []Event
		if err := d.PendingEvents(100, func(e *Event) bool { evs = append(evs, *e); return true }); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	a, b := run(mustOpen(t)), run(mustOpen(t))
	if len(a) != 2 || len(b) != 2 {
		t.Fatalf("events %d and %d, want 2 (one per created document with a target)", len(a), len(b))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Key != b[i].Key || a[i].ID == "" {
			t.Fatalf("replay wrote another event: %+v / %+v", a[i], b[i])
		}
	}
	if got := a[0].Targets; a[0].Site != "default" || len(got) != 2 || got[0] != "sub:s1" || got[1] != "bus:office" {
		t.Fatalf("default site event targets %v", got)
	}
	if got := a[1].Targets; a[1].Site != "other" || len(got) != 1 || got[0] != "bus:office" {
		t.Fatalf("another site's event went to %v", got)
	}
	d := mustOpen(t)
	evs := run(d)
	done := EventsDelivered{Items: []EventDelivery{{Key: evs[0].Key, Target: "sub:s1"}}}
	mustApply(t, d, OpEventsDelivered, "", t0, done)
	mustApply(t, d, OpEventsDelivered, "", t0, done) // again: nothing changes
	mustApply(t, d, OpEventsDelivered, "", t0, EventsDelivered{Items: []EventDelivery{{Key: evs[0].Key, Target: "bus:office"}}})
	var left []string
	d.PendingEvents(100, func(e *Event) bool { left = append(left, e.Subject); return true })
	if len(left) != 1 || left[0] != "33333333-3333-4333-8333-333333333333" {
		t.Fatalf("left in the outbox: %v", left)
	}
}
