package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// putPolicy adds a RetentionPolicy entity (and a DispositionPolicy when
// action is not empty).
func putPolicy(t *testing.T, d *DB, site, id, mode string, days float64, action string) {
	t.Helper()
	mustApply(t, d, OpPutEntity, site, t0, PutEntity{EntityTypeID: KeyRetentionPolicy, Namespace: NamespacePreset, Mode: "add",
		Entity: Entity{EntityID: id, Name: id, Attributes: []EntityAttribute{
			{Key: KeyRetentionMode, ValueType: DataString, Strings: []string{mode}},
			{Key: KeyRetentionPeriodInDays, ValueType: DataNumber, Numbers: []float64{days}},
		}}})
	if action != "" {
		mustApply(t, d, OpPutEntity, site, t0, PutEntity{EntityTypeID: KeyDispositionPolicy, Namespace: NamespacePreset, Mode: "add",
			Entity: Entity{EntityID: id + "-disp", Name: id, Attributes: []EntityAttribute{
				{Key: KeyDispositionAction, ValueType: DataString, Strings: []string{action}},
			}}})
	}
}

func policyAttrs(id string, disp bool) []AttributeInput {
	in := []AttributeInput{{Key: KeyRetentionPolicy, EntityTypeID: KeyRetentionPolicy, EntityID: id, Namespace: NamespacePreset}}
	if disp {
		in = append(in, AttributeInput{Key: KeyDispositionPolicy, EntityTypeID: KeyDispositionPolicy, EntityID: id + "-disp", Namespace: NamespacePreset})
	}
	return in
}

func retainedDoc(t *testing.T, d *DB, site, id, path, policy string, disp bool) {
	t.Helper()
	mustApply(t, d, OpAddDocuments, site, t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: id, Path: path},
		Attributes: policyAttrs(policy, disp)}}})
}

func TestRetention_ComputedAttributes(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	putPolicy(t, d, "s", "seven", RetentionOnly, 7, "")
	retainedDoc(t, d, "s", "doc1", "a.txt", "seven", false)
	r, err := d.Retention("s", "doc1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != RetentionOnly || !r.Start.Equal(t0.Truncate(time.Second)) || !r.End.Equal(t0.AddDate(0, 0, 7).Truncate(time.Second)) || r.Status != RetentionStatusActive {
		t.Fatalf("retention %+v", r)
	}
	attrs, _, err := d.DocAttributes("s", "doc1", "", 100)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range attrs {
		if len(a.Strings) > 0 {
			got[a.Key] = a.Strings[0]
		}
	}
	want := map[string]string{
		KeyRetentionEffectiveStartDate: "2026-11-22T10:00:00Z",
		KeyRetentionEffectiveEndDate:   "2026-11-29T10:00:00Z",
		KeyRetentionEffectiveStatus:    RetentionStatusActive,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// A client cannot write a computed key.
	_, err = d.Apply(context.Background(), MustCommand(OpSetDocAttributes, "s", "joe", t0, SetDocAttributes{DocumentID: "doc1", Mode: AttrSet,
		Attributes: []AttributeInput{{Key: KeyRetentionEffectiveEndDate, DateValue: ptr("2020-01-01")}}}))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("writing %s: %v, want a validation error", KeyRetentionEffectiveEndDate, err)
	}
	// A policy without a period would retain nothing: attaching it is refused.
	mustApply(t, d, OpPutEntity, "s", t0, PutEntity{EntityTypeID: KeyRetentionPolicy, Namespace: NamespacePreset, Mode: "add",
		Entity: Entity{EntityID: "open", Name: "open", Attributes: []EntityAttribute{{Key: KeyRetentionMode, ValueType: DataString, Strings: []string{RetentionGovernance}}}}})
	_, err = d.Apply(context.Background(), MustCommand(OpAddDocuments, "s", "joe", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "doc2", Path: "b.txt"},
		Attributes: policyAttrs("open", false)}}}))
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "has no 'RetentionPeriodInDays'") {
		t.Fatalf("a policy without a period: %v, want a validation error", err)
	}
	if _, err := d.GetDocument("s", "doc2"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the refused document was written: %v", err)
	}
	// RETENTION_ONLY does not stop a delete; the record goes with it.
	mustApply(t, d, OpDeleteDocument, "s", t0, DocumentRef{DocumentID: "doc1"})
	if _, err := d.Retention("s", "doc1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("retention after delete: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// TestGovernance_EveryMutatingApplierRefuses applies every document
// change to a governed document (refused) and to the same document
// under RETENTION_ONLY (accepted).
func TestGovernance_EveryMutatingApplierRefuses(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	putPolicy(t, d, "s", "gov", RetentionGovernance, 30, "")
	putPolicy(t, d, "s", "keep", RetentionOnly, 30, "")
	putPolicy(t, d, "s", "other", RetentionOnly, 1, "")
	at := t0.Add(time.Hour)
	content := []byte("new content")
	m, chunks, ok := SmallContent(content)
	if !ok {
		t.Fatal("SmallContent refused")
	}
	changes := []struct {
		name string
		op   Op
		pay  func(doc string) any
	}{
		{"soft delete", OpSoftDelete, func(doc string) any { return DocumentRef{DocumentID: doc} }},
		{"delete", OpDeleteDocument, func(doc string) any { return DocumentRef{DocumentID: doc} }},
		{"move", OpUpdateDocument, func(doc string) any { return UpdateDocument{DocumentID: doc, Path: ptr("moved/" + doc)} }},
		{"inline content", OpUpdateDocument, func(doc string) any { return UpdateDocument{DocumentID: doc, Content: &m, Chunks: chunks} }},
		{"content type", OpUpdateDocument, func(doc string) any { return UpdateDocument{DocumentID: doc, ContentType: ptr("text/html")} }},
		{"commit upload", OpCommitContent, func(doc string) any { return CommitContent{DocumentID: doc, Content: m, Chunks: chunks} }},
		{"remove policy", OpSetDocAttributes, func(doc string) any {
			return SetDocAttributes{DocumentID: doc, Mode: AttrDelete, DeleteKey: KeyRetentionPolicy}
		}},
		{"replace policy", OpSetDocAttributes, func(doc string) any {
			return SetDocAttributes{DocumentID: doc, Mode: AttrSet, Attributes: policyAttrs("other", false)}
		}},
		{"replace all attributes", OpSetDocAttributes, func(doc string) any { return SetDocAttributes{DocumentID: doc, Mode: AttrReplace} }},
		{"patch policy", OpUpdateDocument, func(doc string) any {
			return UpdateDocument{DocumentID: doc, Attributes: policyAttrs("other", false)}
		}},
		{"folder move", OpMoveFolder, func(doc string) any { return MoveFolder{Source: "f-" + doc, Target: "g-" + doc + "/", Limit: 10} }},
		{"delete parent", OpDeleteDocument, func(doc string) any { return DocumentRef{DocumentID: "p-" + doc} }},
	}
	for i, ch := range changes {
		for _, mode := range []string{"gov", "keep"} {
			doc := ch.name + "-" + mode
			retainedDoc(t, d, "s", doc, "f-"+doc+"/x.txt", mode, false)
			// A parent with the retained document as its child.
			mustApply(t, d, OpAddDocuments, "s", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "p-" + doc, Path: "p-" + doc}}}})
			mustApply(t, d, OpUpdateDocument, "s", t0, UpdateDocument{DocumentID: "p-" + doc, Children: []NewDocument{{
				Document: Document{DocumentID: "c-" + doc}, Attributes: policyAttrs(mode, false)}}})
			target := doc
			if ch.name == "delete parent" {
				target = "c-" + doc
			}
			_, err := d.Apply(context.Background(), MustCommand(ch.op, "s", "admin", at.Add(time.Duration(i)*time.Minute), ch.pay(doc)))
			var ge *GovernedError
			if mode == "gov" {
				if !errors.As(err, &ge) || !errors.Is(err, ErrGoverned) {
					t.Errorf("%s on a governed document: %v, want GovernedError", ch.name, err)
				}
				if r, err := d.Retention("s", target); err != nil || r.PolicyID != "gov" {
					t.Errorf("%s: retention after refusal %+v, %v", ch.name, r, err)
				}
			} else if err != nil {
				t.Errorf("%s on a RETENTION_ONLY document: %v", ch.name, err)
			}
		}
	}
	// Tags and other attributes stay writable under GOVERNANCE.
	retainedDoc(t, d, "s", "tagged", "tagged.txt", "gov", false)
	mustApply(t, d, OpSetTags, "s", at, SetTags{DocumentID: "tagged", Mode: "add", Tags: []Tag{{Key: "k", Value: "v"}}})
	// After its end the governed document may be deleted.
	mustApply(t, d, OpDeleteDocument, "s", t0.AddDate(0, 0, 31), DocumentRef{DocumentID: "tagged"})
}

func TestScheduler_MarkJobRunOnce(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	if _, err := d.JobRan("disposition", "2026-11-22"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before: %v", err)
	}
	mustApply(t, d, OpMarkJobRun, "", t0, JobRun{Job: "disposition", Day: "2026-11-22"})
	r, err := d.JobRan("disposition", "2026-11-22")
	if err != nil || !r.At.Equal(t0) {
		t.Fatalf("mark %+v, %v", r, err)
	}
	_, err = d.Apply(context.Background(), MustCommand(OpMarkJobRun, "", "", t0, JobRun{Job: "disposition", Day: "2026-11-22"}))
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("second mark: %v, want a conflict", err)
	}
	_, err = d.Apply(context.Background(), MustCommand(OpMarkJobRun, "", "", t0, JobRun{Job: "x/y", Day: "22-11-2026"}))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("bad mark: %v", err)
	}
}

func TestDisposition_RetentionDue(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	putPolicy(t, d, "s", "soft", RetentionGovernance, 2, DispositionSoftDelete)
	putPolicy(t, d, "s", "hard", RetentionOnly, 2, DispositionDelete)
	putPolicy(t, d, "s", "plain", RetentionOnly, 2, "")
	putPolicy(t, d, "s", "long", RetentionOnly, 10, DispositionDelete)
	retainedDoc(t, d, "s", "soft1", "soft1.txt", "soft", true)
	retainedDoc(t, d, "s", "hard1", "hard1.txt", "hard", true)
	retainedDoc(t, d, "s", "plain1", "plain1.txt", "plain", false)
	retainedDoc(t, d, "s", "long1", "long1.txt", "long", true)
	night := t0.AddDate(0, 0, 3)
	due, _, err := d.RetentionDue("s", night, "", 100)
	if err != nil || len(due) != 3 {
		t.Fatalf("due %v, %v", due, err)
	}
	run := func() *RetentionDueResult {
		res := mustApply(t, d, OpRetentionDue, "s", night, RetentionDueDocs{DocumentIDs: append(due, "long1", "gone"), Day: "2026-11-25"})
		out, ok := res.Value.(*RetentionDueResult)
		if !ok {
			t.Fatalf("RetentionDue returned %T", res.Value)
		}
		return out
	}
	if r := run(); r.Expired != 3 || r.Disposed != 2 {
		t.Fatalf("first run %+v", r)
	}
	// Idempotent: a repeated run (a crash before the day's mark) does nothing.
	if r := run(); r.Expired != 0 || r.Disposed != 0 {
		t.Fatalf("second run %+v", r)
	}
	if doc, err := d.GetDocumentAny("s", "soft1"); err != nil || doc.DeletedDate == nil {
		t.Fatalf("soft1: %+v, %v (want soft-deleted)", doc, err)
	}
	if _, err := d.GetDocument("s", "hard1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("hard1: %v (want deleted)", err)
	}
	if doc, err := d.GetDocument("s", "plain1"); err != nil || doc.DeletedDate != nil {
		t.Fatalf("plain1: %+v, %v (want kept)", doc, err)
	}
	if r, err := d.Retention("s", "plain1"); err != nil || r.Status != RetentionStatusExpired {
		t.Fatalf("plain1 retention %+v, %v", r, err)
	}
	if r, err := d.Retention("s", "long1"); err != nil || r.Status != RetentionStatusActive {
		t.Fatalf("long1 retention %+v, %v", r, err)
	}
	recs, err := d.Dispositions("s")
	if err != nil || len(recs) != 2 {
		t.Fatalf("dispositions %+v, %v", recs, err)
	}
	for _, r := range recs {
		want := map[string]string{"soft1": DispositionSoftDelete, "hard1": DispositionDelete}[r.DocumentID]
		if r.Action != want || r.Day != "2026-11-25" {
			t.Errorf("disposition %+v, want action %s", r, want)
		}
	}
	if due, _, _ := d.RetentionDue("s", night, "", 100); len(due) != 0 {
		t.Fatalf("still due after the run: %v", due)
	}
}

// TestDisposition_HeldDocumentWaits: a document under legal hold when its
// disposition comes is left as it is and stays due, without holding back
// the documents after it; once the hold is lifted the next run disposes
// of it.
func TestDisposition_HeldDocumentWaits(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	putPolicy(t, d, "s", "hard", RetentionOnly, 2, DispositionDelete)
	retainedDoc(t, d, "s", "held", "held.txt", "hard", true)
	retainedDoc(t, d, "s", "free", "free.txt", "hard", true)
	mustApply(t, d, OpSetDocumentLock, "s", t0, SetDocumentLock{DocumentID: "held", Kind: LockLegalHold})
	night := t0.AddDate(0, 0, 3)
	first, next, err := d.RetentionDue("s", night, "", 1)
	if err != nil || len(first) != 1 || next == "" {
		t.Fatalf("first page %v %q, %v", first, next, err)
	}
	rest, _, err := d.RetentionDue("s", night, next, 10)
	if err != nil || len(rest) != 1 || rest[0] == first[0] {
		t.Fatalf("after the cursor %v, %v (first %v)", rest, err, first)
	}
	res := mustApply(t, d, OpRetentionDue, "s", night, RetentionDueDocs{DocumentIDs: []string{"held", "free"}, Day: "2026-11-25"})
	r, ok := res.Value.(*RetentionDueResult)
	if !ok || r.Held != 1 || r.Disposed != 1 {
		t.Fatalf("run %+v (%T)", res.Value, res.Value)
	}
	if _, err := d.GetDocument("s", "held"); err != nil {
		t.Fatalf("held document: %v (want kept)", err)
	}
	if _, err := d.GetDocument("s", "free"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("free document: %v (want deleted)", err)
	}
	if due, _, _ := d.RetentionDue("s", night, "", 10); len(due) != 1 || due[0] != "held" {
		t.Fatalf("due after the run: %v, want [held]", due)
	}
	mustApply(t, d, OpSetDocumentLock, "s", night, SetDocumentLock{DocumentID: "held", Kind: LockLegalHold, Release: true})
	later := night.AddDate(0, 0, 1)
	res = mustApply(t, d, OpRetentionDue, "s", later, RetentionDueDocs{DocumentIDs: []string{"held"}, Day: "2026-11-26"})
	if r, ok := res.Value.(*RetentionDueResult); !ok || r.Disposed != 1 || r.Held != 0 {
		t.Fatalf("run after the hold %+v", res.Value)
	}
	if _, err := d.GetDocument("s", "held"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("held document after the hold: %v (want deleted)", err)
	}
}
