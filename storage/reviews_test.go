package storage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestReviews_DecisionsAndCascade: a decision on a closed review is a
// ConflictError that writes nothing; racing decisions on a review that
// needs K give exactly K accepted; a hard delete of the document (and of
// its artifact) removes every review and decision in the same transaction.
func TestReviews_DecisionsAndCascade(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const doc = "22222222-2222-4222-8222-222222222222"
	addDoc(t, d, "default", doc, "r.txt", t0)
	art := artifactID(1)
	if err := addArtifact(d, "default", doc, art); err != nil {
		t.Fatal(err)
	}
	mustApply(t, d, OpAddReview, "default", t0, Review{DocumentID: doc, ReviewID: "r1", ReviewCategory: "c", RequiredDecisions: 4})
	mustApply(t, d, OpAddReview, "default", t0, Review{DocumentID: art, ParentID: doc, ReviewID: "r2", ReviewCategory: "c", RequiredDecisions: 1})
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ok, clash int
	)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := d.Apply(context.Background(), MustCommand(OpAddReviewDecision, "default", "joe", t0,
				ReviewDecision{DocumentID: doc, ReviewID: "r1", DecisionID: fmt.Sprintf("d%02d", i), Type: "APPROVAL"}))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, ErrConflict):
				clash++
			default:
				t.Errorf("decision %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if ok != 4 || clash != 16 {
		t.Fatalf("accepted %d, conflicts %d; want 4 and 16", ok, clash)
	}
	rv, err := d.GetReview("default", doc, "r1")
	if err != nil || rv.ReviewStatus != ReviewCompleted || rv.Decisions != 4 {
		t.Fatalf("review = %+v, %v", rv, err)
	}
	ds, _, err := d.ReviewDecisions("default", doc, "r1", "", 100)
	if err != nil || len(ds) != 4 {
		t.Fatalf("decisions = %d, %v", len(ds), err)
	}
	mustApply(t, d, OpAddReviewDecision, "default", t0, ReviewDecision{DocumentID: art, ReviewID: "r2", DecisionID: "x", Type: "COMMENT"})
	mustApply(t, d, OpDeleteDocument, "default", t0, DocumentRef{DocumentID: doc})
	err = d.view(func(t2 *tx) error {
		for _, pfx := range []string{pfxReview, pfxReviewDecision} {
			if k := t2.firstKey([]byte(pfx)); k != nil {
				return fmt.Errorf("key %q left", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(context.Background(), MustCommand(OpAddReview, "default", "joe", t0,
		Review{DocumentID: doc, ReviewID: "r3", ReviewCategory: "c", RequiredDecisions: 1})); !errors.As(err, new(*NotFoundError)) {
		t.Fatalf("review of a deleted document: %v", err)
	}
}
