package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestSystemTags_OnlyFromThePipeline: no command a client's request
// builds can set or delete the antivirus verdict, whatever type it
// claims; the follow-up commands of a finished action can.
func TestSystemTags_OnlyFromThePipeline(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	id := "11111111-1111-4111-8111-111111111111"
	m, ch, _ := SmallContent([]byte("x"))
	mustApply(t, d, OpAddDocuments, "default", t0, AddDocuments{Docs: []NewDocument{{
		Document: Document{DocumentID: id, Path: "a.txt"}, Content: &m, Chunks: ch, Tags: []Tag{{Key: "k"}}, Actions: []Action{{Type: "ANTIVIRUS"}}}}})
	clean := func(typ string) []Tag { return []Tag{{Key: "CLAMAV_SCAN_STATUS", Value: "CLEAN", Type: typ}} }
	forged := []struct {
		name    string
		op      Op
		payload any
	}{
		{"set", OpSetTags, SetTags{DocumentID: id, Mode: TagsAdd, Tags: clean("")}},
		{"set claiming the system type", OpSetTags, SetTags{DocumentID: id, Mode: TagsAdd, Tags: clean(TagSystemDefined)}},
		{"replace", OpSetTags, SetTags{DocumentID: id, Mode: tagsReplace, Tags: clean("")}},
		{"by match", OpUpdateMatchTags, UpdateMatchTags{Match: TagMatch{Key: "k"}, DocumentIDs: []string{id}, Tags: clean(TagSystemDefined)}},
		{"on create", OpAddDocuments, AddDocuments{Docs: []NewDocument{{Document: Document{DocumentID: "22222222-2222-4222-8222-222222222222", Path: "b.txt"}, Tags: clean(TagSystemDefined)}}}},
		{"delete", OpDeleteTag, DeleteTag{DocumentID: id, Key: "CLAMAV_SCAN_STATUS"}},
	}
	for _, tt := range forged {
		t.Run(tt.name, func(t *testing.T) {
			_, err := d.Apply(context.Background(), MustCommand(tt.op, "default", "joe", t0, tt.payload))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("forged verdict: err = %v, want a validation error", err)
			}
		})
	}
	if _, err := d.GetTag("default", id, "CLAMAV_SCAN_STATUS"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("verdict tag after forged commands: %v", err)
	}
	ref := ActionRef{DocumentID: id, Seq: 0}
	mustApply(t, d, OpStartAction, "default", t0, ref)
	mustApply(t, d, OpFinishAction, "default", t0, FinishAction{ActionRef: ref, Status: ActionComplete,
		Then: []Command{*MustCommand(OpSetTags, "", "", t0, SetTags{DocumentID: id, Mode: TagsAdd, Tags: clean(TagSystemDefined)})}})
	if tg, err := d.GetTag("default", id, "CLAMAV_SCAN_STATUS"); err != nil || tg.Value != "CLEAN" {
		t.Fatalf("verdict from the pipeline: %v %v", tg, err)
	}
}

// TestLimits_Backstops: a key nobody bounded and a transaction over
// Badger's size are validation errors, not storage failures.
func TestLimits_Backstops(t *testing.T) {
	d := mustOpen(t)
	tests := []struct {
		name string
		fn   applyFunc
	}{
		{"long key", func(t *tx, c *Command) (any, error) {
			return nil, t.set(bytes.Repeat([]byte("k"), maxStoredKeyBytes+1), nil)
		}},
		{"huge transaction", func(t *tx, c *Command) (any, error) {
			for i := 0; i < 1_000_000; i++ {
				if err := t.set([]byte(fmt.Sprintf("test/%08d", i)), bytes.Repeat([]byte("v"), 100)); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}},
	}
	const op = Op("TestBackstop")
	t.Cleanup(func() { delete(appliers, op) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			appliers[op] = tt.fn
			_, err := d.Apply(context.Background(), MustCommand(op, "default", "joe", t0, nil))
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a validation error", err)
			}
		})
	}
}
