package storage

import (
	"errors"
	"testing"
)

// TestActionCap_EarlierRulesApplyAsBefore: a document full to
// MaxDocumentActions refuses one more action added by a command of the
// current rules, while a log entry of a release before RulesActionCap
// (which knew no such limit) applies as it did, on every replay.
func TestActionCap_EarlierRulesApplyAsBefore(t *testing.T) {
	t.Parallel() // own store, no package or process state
	for _, tt := range []struct {
		name    string
		rules   int
		refused bool
	}{
		{"the current rules", Rules, true},
		{"an entry of an earlier release", RulesActionCap - 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := mustOpen(t)
			mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "full.txt", Path: "full.txt"}}}})
			some := func(n int) AddActions {
				p := AddActions{DocumentID: "full.txt"}
				for range n {
					p.Actions = append(p.Actions, Action{Type: "FULLTEXT"})
				}
				return p
			}
			for i := 0; i < MaxDocumentActions/MaxActionsPerRequest; i++ {
				mustApply(t, d, OpAddActions, "default", t0, some(MaxActionsPerRequest))
			}
			c := MustCommand(OpAddActions, "default", "joe", t0, some(1))
			c.Rules = tt.rules
			_, err := d.Apply(t.Context(), c)
			var ve *ValidationError
			if got := errors.As(err, &ve); got != tt.refused {
				t.Fatalf("one action past the limit: %v, want refused %v", err, tt.refused)
			}
			acts, err := d.GetActions("default", "full.txt")
			if err != nil {
				t.Fatal(err)
			}
			want := MaxDocumentActions
			if !tt.refused {
				want++
			}
			if len(acts) != want {
				t.Fatalf("the document holds %d actions, want %d", len(acts), want)
			}
		})
	}
}
