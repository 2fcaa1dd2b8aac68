package storage

import (
	"errors"
	"strings"
	"testing"
)

// TestDefinitionFields_EarlierRulesApplyAsBefore: a definition field past
// its limit is refused by a command of the current rules, while a log
// entry of a release before RulesDefinitionFields (which bounded only the
// definition as a whole) applies as it did, on every replay.
func TestDefinitionFields_EarlierRulesApplyAsBefore(t *testing.T) {
	t.Parallel() // own stores, no package or process state
	long := strings.Repeat("a", MaxKeyBytes+1)
	perms := make([]string, MaxValuesPerKey+1)
	for i := range perms {
		perms[i] = "READ"
	}
	for _, op := range []struct {
		name    string
		op      Op
		payload any
		stored  func(d *DB) bool
	}{
		{"attribute validationRegex", OpAddAttribute, AddAttribute{Def: AttributeDef{Key: "code", ValidationRegex: strings.Repeat("a", MaxValueBytes+1)}}, func(d *DB) bool {
			_, err := d.AttributeDefinition("default", "code")
			return err == nil
		}},
		{"entityTypeId", OpAddEntityType, AddEntityType{EntityType: EntityType{EntityTypeID: long, Namespace: NamespaceCustom, Name: "vendor"}}, func(d *DB) bool {
			_, err := d.GetEntityType("default", long, NamespaceCustom)
			return err == nil
		}},
		{"API key permissions", OpAddAPIKey, AddAPIKey{Key: APIKey{Hash: strings.Repeat("0", 64), Name: "k", Permissions: perms}}, func(d *DB) bool {
			_, err := d.LookupAPIKey(strings.Repeat("0", 64))
			return err == nil
		}},
	} {
		for _, tt := range []struct {
			name    string
			rules   int
			refused bool
		}{
			{"the current rules", Rules, true},
			{"an entry of an earlier release", RulesDefinitionFields - 1, false},
		} {
			t.Run(op.name+"/"+tt.name, func(t *testing.T) {
				d := mustOpen(t)
				c := MustCommand(op.op, "default", "joe", t0, op.payload)
				c.Rules = tt.rules
				_, err := d.Apply(t.Context(), c)
				var ve *ValidationError
				if got := errors.As(err, &ve); got != tt.refused {
					t.Fatalf("past the limit: %v, want refused %v", err, tt.refused)
				}
				if got := op.stored(d); got == tt.refused {
					t.Fatalf("stored %v, want %v", got, !tt.refused)
				}
			})
		}
	}
}
