package node

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"quire/storage"
)

// TestForward_ErrorsAndResultsKeepTheirTypes: what a follower's server
// sees of a forwarded write is what the leader's applier returned.
func TestForward_ErrorsAndResultsKeepTheirTypes(t *testing.T) {
	for _, err := range []error{
		&storage.ValidationError{Items: []storage.ValidationItem{{Key: "key", Msg: "exists"}}},
		&storage.NotFoundError{Msg: "Document x not found."},
		&storage.ConflictError{Msg: "documentId 'x' already exists"},
		&storage.AccessError{Msg: "fkq access denied"},
		&storage.WriteRefusedError{Kind: storage.KindIOError, Reason: "disk failed"},
		&storage.RequestReplayError{Answer: storage.RequestAnswer{Status: 201, ContentType: "application/json", Body: []byte(`{"documentId":"d"}`)}},
	} {
		b, jerr := json.Marshal(encodeError(err))
		if jerr != nil {
			t.Fatal(jerr)
		}
		var w wireError
		if jerr := json.Unmarshal(b, &w); jerr != nil {
			t.Fatal(jerr)
		}
		if got := decodeError(&w); !reflect.DeepEqual(got, err) {
			t.Errorf("%T: got %#v, want %#v", err, got, err)
		}
	}
	for _, s := range []error{storage.ErrNotFound, storage.ErrBadToken, storage.ErrTooLarge, storage.ErrActionChanged} {
		if got := decodeError(encodeError(s)); !errors.Is(got, s) {
			t.Errorf("%v: got %v", s, got)
		}
	}
	for _, v := range []any{"entity-type-1", int64(42), &storage.Document{DocumentID: "d", Path: "a/b.txt"},
		&storage.DeleteTagResult{}, storage.MoveFolderResult{Done: true}} {
		name, raw, err := encodeValue(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeValue(name, raw)
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("%T: got %#v (%v), want %#v", v, got, err, v)
		}
	}
}
