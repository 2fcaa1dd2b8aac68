package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/server/internal/api"
	"quire/storage"
)

// fakeClock is a Clock the test moves; After fires when Advance passes
// its deadline.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	afters  int // After calls so far
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.afters++
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the clock and fires the waiters that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// waited reports whether After was called n times: the scheduler is
// waiting for its n-th wake-up.
func (c *fakeClock) waited(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.afters >= n
}

// eventually polls cond until it holds or 10 seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func openTestDB(t *testing.T, dir string) *storage.DB {
	t.Helper()
	db, err := storage.Open(storage.Config{Dir: dir, Logger: quietLog(), MinFreeBytes: -1, MinFreePercent: -1})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// countingJob counts its runs per day; failFirst makes its first run of
// each day fail after its effect (a crash before the mark).
type countingJob struct {
	mu        sync.Mutex
	runs      map[string]int
	failFirst bool
	total     atomic.Int32
}

func (j *countingJob) job() Job {
	return Job{Name: "count", Run: func(_ context.Context, day string, _ time.Time) error {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.runs == nil {
			j.runs = map[string]int{}
		}
		j.runs[day]++
		j.total.Add(1)
		if j.failFirst && j.runs[day] == 1 {
			return errors.New("crashed before the mark")
		}
		return nil
	}}
}

func (j *countingJob) runsOf(day string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.runs[day]
}

func marked(db *storage.DB, job, day string) bool {
	_, err := db.JobRan(job, day)
	return err == nil
}

func TestScheduler_DailyOnceAcrossRestartAndFailover(t *testing.T) {
	dir := t.TempDir()
	db := openTestDB(t, dir)
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	var j countingJob
	a := NewScheduler(db, db, clock, quietLog(), j.job())

	// Not leading: moving the clock runs nothing.
	clock.Advance(48 * time.Hour)
	if j.total.Load() != 0 {
		t.Fatalf("ran %d times before it was started", j.total.Load())
	}
	clock.now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

	// Leading: today's run at once, then one at the next midnight.
	a.Start()
	eventually(t, "the first day's mark", func() bool { return marked(db, "count", "2026-11-22") && clock.waited(1) })
	clock.Advance(time.Hour) // 11:00, same day: nothing
	clock.Advance(13 * time.Hour)
	eventually(t, "the second day's mark", func() bool { return marked(db, "count", "2026-11-23") && clock.waited(2) })
	if j.runsOf("2026-11-22") != 1 || j.runsOf("2026-11-23") != 1 {
		t.Fatalf("runs %v", j.runs)
	}

	// Failover: a stops leading, b (another node over the same
	// replicated store) takes over the same day and does not run again.
	a.Stop()
	clock.Advance(time.Hour)
	b := NewScheduler(db, db, clock, quietLog(), j.job())
	b.Start()
	eventually(t, "b waiting for the next day", func() bool { return clock.waited(3) })
	if n := j.runsOf("2026-11-23"); n != 1 {
		t.Fatalf("after failover the day ran %d times", n)
	}
	b.Stop()

	// Restart: the store is closed and opened again; the mark is there.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openTestDB(t, dir)
	defer db.Close()
	c := NewScheduler(db, db, clock, quietLog(), j.job())
	c.Start()
	eventually(t, "c waiting", func() bool { return clock.waited(4) })
	if n := j.runsOf("2026-11-23"); n != 1 {
		t.Fatalf("after restart the day ran %d times", n)
	}
	c.Stop()
	if got := j.total.Load(); got != 2 {
		t.Fatalf("%d runs in all, want 2", got)
	}
}

// A job that fails (a crash between its effects and the mark) leaves the
// day unmarked: it is retried that day, and marked once it succeeds.
func TestScheduler_FailedJobRetriedThenMarked(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	j := countingJob{failFirst: true}
	s := NewScheduler(db, db, clock, quietLog(), j.job())
	s.Start()
	defer s.Stop()
	eventually(t, "the first attempt", func() bool { return j.runsOf("2026-11-22") == 1 && clock.waited(1) })
	if marked(db, "count", "2026-11-22") {
		t.Fatal("a failed run was marked")
	}
	clock.Advance(schedulerRetry)
	eventually(t, "the retry's mark", func() bool { return marked(db, "count", "2026-11-22") && clock.waited(2) })
	clock.Advance(schedulerRetry) // no retry after the mark: the wait is until midnight
	if clock.waited(3) {
		t.Fatal("the scheduler woke up again before midnight")
	}
	if n := j.runsOf("2026-11-22"); n != 2 {
		t.Fatalf("the day ran %d times, want 2 (one failed)", n)
	}
}

// The nightly disposition job, run by the scheduler as the clock passes
// the documents' retention end: soft-deleted, deleted, or expired.
func TestDisposition_NightlyRunByScheduler(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	apply := func(op storage.Op, site string, p any) {
		t.Helper()
		if _, err := db.Apply(context.Background(), storage.MustCommand(op, site, "joe", t0, p)); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	for _, site := range []string{"default", "other"} {
		apply(storage.OpPutEntity, site, storage.PutEntity{EntityTypeID: "RetentionPolicy", Namespace: "PRESET", Mode: "add",
			Entity: storage.Entity{EntityID: "p2", Name: "two days", Attributes: []storage.EntityAttribute{
				{Key: "RetentionMode", ValueType: "STRING", Strings: []string{"GOVERNANCE"}},
				{Key: "RetentionPeriodInDays", ValueType: "NUMBER", Numbers: []float64{2}},
			}}})
		apply(storage.OpPutEntity, site, storage.PutEntity{EntityTypeID: "DispositionPolicy", Namespace: "PRESET", Mode: "add",
			Entity: storage.Entity{EntityID: "del", Name: "delete", Attributes: []storage.EntityAttribute{
				{Key: "DispositionAction", ValueType: "STRING", Strings: []string{"DELETE"}}}}})
		apply(storage.OpPutEntity, site, storage.PutEntity{EntityTypeID: "DispositionPolicy", Namespace: "PRESET", Mode: "add",
			Entity: storage.Entity{EntityID: "site-default", Name: "site default"}})
		pol := storage.AttributeInput{Key: "RetentionPolicy", EntityTypeID: "RetentionPolicy", EntityID: "p2"}
		docs := []storage.NewDocument{
			{Document: storage.Document{DocumentID: "del-doc", Path: "del.txt"}, Attributes: []storage.AttributeInput{pol,
				{Key: "DispositionPolicy", EntityTypeID: "DispositionPolicy", EntityID: "del"}}},
			{Document: storage.Document{DocumentID: "soft-doc", Path: "soft.txt"}, Attributes: []storage.AttributeInput{pol,
				{Key: "DispositionPolicy", EntityTypeID: "DispositionPolicy", EntityID: "site-default"}}},
			{Document: storage.Document{DocumentID: "kept-doc", Path: "kept.txt"}, Attributes: []storage.AttributeInput{pol}},
		}
		apply(storage.OpAddDocuments, site, storage.AddDocuments{Docs: docs})
	}
	clock := &fakeClock{now: t0}
	s := NewScheduler(db, db, clock, quietLog(), dispositionJob(db, db))
	s.Start()
	defer s.Stop()
	eventually(t, "the first night", func() bool { return marked(db, jobDisposition, "2026-11-22") && clock.waited(1) })
	if recs, _ := db.Dispositions("default"); len(recs) != 0 {
		t.Fatalf("disposed before the end: %+v", recs)
	}
	clock.Advance(14 * time.Hour) // 23rd, 00:00
	eventually(t, "the second night", func() bool { return marked(db, jobDisposition, "2026-11-23") && clock.waited(2) })
	clock.Advance(24 * time.Hour) // 24th, 00:00: the retention ended at 10:00 on the 24th
	eventually(t, "the third night", func() bool { return marked(db, jobDisposition, "2026-11-24") && clock.waited(3) })
	if recs, _ := db.Dispositions("default"); len(recs) != 0 {
		t.Fatalf("disposed before the end: %+v", recs)
	}
	clock.Advance(24 * time.Hour)
	eventually(t, "the fourth night", func() bool { return marked(db, jobDisposition, "2026-11-25") })
	for _, site := range []string{"default", "other"} {
		recs, err := db.Dispositions(site)
		if err != nil || len(recs) != 2 {
			t.Fatalf("%s: dispositions %+v, %v", site, recs, err)
		}
		for _, r := range recs {
			want := map[string]string{"del-doc": "DELETE", "soft-doc": "SOFT_DELETE"}[r.DocumentID]
			if r.Action != want || r.Day != "2026-11-25" {
				t.Errorf("%s: %+v, want %s on 2026-11-25", site, r, want)
			}
		}
		if _, err := db.GetDocumentAny(site, "del-doc"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: del-doc still there: %v", site, err)
		}
		if d, err := db.GetDocumentAny(site, "soft-doc"); err != nil || d.DeletedDate == nil {
			t.Errorf("%s: soft-doc %+v, %v: want soft-deleted", site, d, err)
		}
		if d, err := db.GetDocument(site, "kept-doc"); err != nil || d.DeletedDate != nil {
			t.Errorf("%s: kept-doc %+v, %v: want kept", site, d, err)
		}
		if r, err := db.Retention(site, "kept-doc"); err != nil || r.Status != storage.RetentionStatusExpired {
			t.Errorf("%s: kept-doc retention %+v, %v", site, r, err)
		}
	}
}

// The server's scheduler runs only while SetLeader(true) holds: a node
// that stops leading runs nothing as days pass, and runs the missed day
// when it leads again.
func TestScheduler_RunsOnlyWhileLeading(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	clock := &fakeClock{now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	s := New(api.Deps{Store: db, Clock: clock, Logger: quietLog()})
	defer s.sched.Stop()
	clock.Advance(time.Hour)
	if clock.waited(1) || marked(db, jobDisposition, "2026-11-22") {
		t.Fatal("the scheduler ran before the server led")
	}
	s.SetLeader(true)
	eventually(t, "the first day's mark", func() bool { return marked(db, jobDisposition, "2026-11-22") && clock.waited(1) })
	s.SetLeader(false)
	clock.Advance(24 * time.Hour)
	if clock.waited(2) || marked(db, jobDisposition, "2026-11-23") {
		t.Fatal("the scheduler ran after the server stopped leading")
	}
	s.SetLeader(true)
	eventually(t, "the missed day's mark", func() bool { return marked(db, jobDisposition, "2026-11-23") && clock.waited(2) })
	s.SetLeader(false)
}

// The daily reminders and agreements jobs, run by the scheduler as the
// clock moves: a reminder policy's notification becomes one NOTIFICATION
// action on its due day (and again after its repeat interval), never
// twice for a day; an Agreement dossier past its expiration date in an
// expiring status becomes Expired, other statuses stay.
func TestReminders_AndAgreementsRunByScheduler(t *testing.T) {
	db := openTestDB(t, t.TempDir())
	defer db.Close()
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	apply := func(op storage.Op, site string, p any) {
		t.Helper()
		if _, err := db.Apply(context.Background(), storage.MustCommand(op, site, "joe", t0, p)); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
	}
	date := func(s string) *string { return &s }
	apply(storage.OpAddAttribute, "default", storage.AddAttribute{Def: storage.AttributeDef{Key: "ContractEnd", DataType: "DATE", Type: "STANDARD"}})
	apply(storage.OpPutEntity, "default", storage.PutEntity{EntityTypeID: "ReminderPolicy", Namespace: "PRESET", Mode: "add",
		Entity: storage.Entity{EntityID: "r1", Name: "a day before, weekly", Attributes: []storage.EntityAttribute{
			{Key: "ReminderDateSourceAttributeKey", ValueType: "STRING", Strings: []string{"ContractEnd"}},
			{Key: "ReminderPeriod", ValueType: "NUMBER", Numbers: []float64{-1}},
			{Key: "ReminderRepeatInterval", ValueType: "NUMBER", Numbers: []float64{7}},
			{Key: "ReminderNotificationToCc", ValueType: "STRING", Strings: []string{"Legal@Example.com"}},
			{Key: "ReminderNotificationSubject", ValueType: "STRING", Strings: []string{"Contract ends"}},
		}}})
	apply(storage.OpAddDocuments, "default", storage.AddDocuments{Docs: []storage.NewDocument{
		{Document: storage.Document{DocumentID: "contract", Path: "contract.txt"}, Attributes: []storage.AttributeInput{
			{Key: "ContractEnd", DateValue: date("2026-11-25")},
			{Key: "ReminderPolicy", EntityTypeID: "ReminderPolicy", EntityID: "r1"}}},
		{Document: storage.Document{DocumentID: "agr-active", Path: "a1.txt", ResourceType: "DOSSIER"}, Attributes: []storage.AttributeInput{
			{Key: "AgreementStatus", StringValue: date("Active")}, {Key: "AgreementExpirationDate", DateValue: date("2026-11-23")}}},
		{Document: storage.Document{DocumentID: "agr-draft", Path: "a2.txt", ResourceType: "DOSSIER"}, Attributes: []storage.AttributeInput{
			{Key: "AgreementStatus", StringValue: date("Draft")}, {Key: "AgreementExpirationDate", DateValue: date("2026-11-23")}}},
		{Document: storage.Document{DocumentID: "agr-later", Path: "a3.txt", ResourceType: "DOSSIER"}, Attributes: []storage.AttributeInput{
			{Key: "AgreementStatus", StringValue: date("Signed")}, {Key: "AgreementExpirationDate", DateValue: date("2026-12-30")}}},
	}})
	notifications := func() []storage.DocNotification {
		ns, _, err := db.DocumentNotifications("default", "contract", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return ns
	}
	if ns := notifications(); len(ns) != 1 || ns[0].Status != "PENDING" || !ns[0].NotificationDate.Equal(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)) ||
		len(ns[0].CC) != 1 || ns[0].CC[0] != "legal@example.com" {
		t.Fatalf("notification before the due day: %+v", ns)
	}
	status := func(id string) string {
		a, err := db.DocAttribute("default", id, "AgreementStatus")
		if err != nil || len(a.Strings) == 0 {
			t.Fatalf("%s status: %+v %v", id, a, err)
		}
		return a.Strings[0]
	}
	clock := &fakeClock{now: t0}
	s := NewScheduler(db, db, clock, quietLog(), remindersJob(db, db), agreementsJob(db, db))
	s.Start()
	defer s.Stop()
	eventually(t, "the first day", func() bool {
		return marked(db, jobReminders, "2026-11-22") && marked(db, jobAgreements, "2026-11-22") && clock.waited(1)
	})
	if _, acts, _ := db.ActionState("default", "contract"); len(acts) != 0 {
		t.Fatalf("actions before the due day: %+v", acts)
	}
	if status("agr-active") != "Active" {
		t.Fatal("expired before its date")
	}
	clock.Advance(14 * time.Hour) // the 23rd: the agreement's date
	eventually(t, "the 23rd", func() bool { return marked(db, jobAgreements, "2026-11-23") && clock.waited(2) })
	if got := []string{status("agr-active"), status("agr-draft"), status("agr-later")}; got[0] != "Expired" || got[1] != "Draft" || got[2] != "Signed" {
		t.Errorf("agreement statuses %v, want Expired Draft Signed", got)
	}
	clock.Advance(24 * time.Hour) // the 24th: the reminder is due
	eventually(t, "the 24th", func() bool { return marked(db, jobReminders, "2026-11-24") && clock.waited(3) })
	_, acts, _ := db.ActionState("default", "contract")
	if len(acts) != 1 || acts[0].Type != "NOTIFICATION" || !strings.Contains(string(acts[0].Parameters), "legal@example.com") {
		t.Fatalf("actions on the due day: %+v", acts)
	}
	ns := notifications()
	if len(ns) != 2 || ns[0].Status != "ACTION_CREATED" || ns[0].ActionSk != "0" || ns[1].Status != "PENDING" ||
		!ns[1].NotificationDate.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("notifications after the due day: %+v", ns)
	}
	// A second run of the same day (a restart before its mark, say) adds nothing.
	if err := remindersJob(db, db).Run(context.Background(), "2026-11-24", clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, acts, _ := db.ActionState("default", "contract"); len(acts) != 1 {
		t.Fatalf("a second run made %d actions", len(acts))
	}
	// A new date recomputes the pending reminder.
	if _, err := db.Apply(context.Background(), storage.MustCommand(storage.OpSetDocAttributes, "default", "joe", clock.Now(), storage.SetDocAttributes{
		DocumentID: "contract", Mode: storage.AttrSet, Attributes: []storage.AttributeInput{{Key: "ContractEnd", DateValue: date("2027-01-10")}}})); err != nil {
		t.Fatal(err)
	}
	ns = notifications()
	if len(ns) != 2 || ns[1].Status != "PENDING" || !ns[1].NotificationDate.Equal(time.Date(2027, 1, 9, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("after a new date: %+v", ns)
	}
	if a, err := db.DocAttribute("default", "contract", "ReminderDueDate"); err != nil || len(a.Strings) == 0 || !strings.HasPrefix(a.Strings[0], "2027-01-09") {
		t.Fatalf("ReminderDueDate %+v %v", a, err)
	}
}
