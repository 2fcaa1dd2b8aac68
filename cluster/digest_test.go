package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"quire/storage"
)

// Every member takes its digest at a digest mark's index; members that
// applied the same log hold equal digests, and one whose store was
// changed outside the log differs, in the kind that was changed.
func TestDigest_EqualOnEveryMemberAndDifferentWhereAStoreDiffers(t *testing.T) {
	ms := []*member{newMember(t, "a"), newMember(t, "b"), newMember(t, "c")}
	formCluster(t, ms)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 30 {
		if _, _, err := ms[0].n.Propose(ctx, addDoc(fmt.Sprintf("d%d", i), fmt.Sprintf("p/%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	digests := func() []storage.Digest {
		t.Helper()
		idx, err := ms[0].n.MarkDigest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []storage.Digest
		for _, m := range ms {
			d, err := m.n.Digest(ctx, idx)
			if err != nil {
				t.Fatalf("%s: digest at %d: %v", m.id, idx, err)
			}
			if d.Index != idx {
				t.Fatalf("%s: digest at %d, want %d", m.id, d.Index, idx)
			}
			out = append(out, d)
		}
		return out
	}
	ds := digests()
	for i, d := range ds {
		if d.SHA256 != ds[0].SHA256 || d.Documents != 30 {
			t.Fatalf("%s: %+v, want %s with 30 documents", ms[i].id, d, ds[0].SHA256)
		}
	}
	// A document written to c's store alone (what a replica that applied
	// another entry holds).
	if _, err := ms[2].db.Apply(ctx, addDoc("rogue", "p/rogue")); err != nil {
		t.Fatal(err)
	}
	ds = digests()
	if ds[0].SHA256 != ds[1].SHA256 || ds[2].SHA256 == ds[0].SHA256 {
		t.Fatalf("digests after a write to c alone: %s %s %s, want a = b != c", ds[0].SHA256, ds[1].SHA256, ds[2].SHA256)
	}
	if k := storage.DifferingKinds(ds[0], ds[2]); len(k) == 0 || k[0] != "documents" {
		t.Fatalf("differing kinds %v, want documents first", k)
	}
	// A mark this node never applied in this process has no digest.
	if _, err := ms[1].n.Digest(ctx, 1); err != ErrNoDigest {
		t.Fatalf("digest at index 1: %v, want ErrNoDigest", err)
	}
}
