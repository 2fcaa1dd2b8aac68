package storage

// Exactly-once writes (Raft client sessions, Ongaro's thesis §6.3): a
// command that carries an Idempotency-Key is recorded, with its result,
// in the transaction that applies it; the same key again (a client's
// retry, a follower's forward sent a second time) answers the recorded
// result and writes nothing. The record is state like any other: it is
// replicated through the log, in snapshots and backups, and decided by
// the command's own time on every node.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"
)

// Idempotency is the Idempotency-Key a command carries (Command.Idem).
type Idempotency struct {
	// Key is the client's Idempotency-Key (CheckIdempotencyKey), scoped
	// by the command's site and user.
	Key string `json:"key"`
	// Hash identifies the request (the server's hash of its method, path,
	// query and body): the same key with another request is refused.
	Hash string `json:"hash"`
	// Doc, when set, is the document the first request created: the
	// record answers only while that document exists (a client-chosen
	// documentId acting as the key, see Implicit).
	Doc string `json:"doc,omitempty"`
	// Implicit marks a key the server derived (from a client-chosen
	// documentId): another request with it is not refused here but
	// applied as usual (the create then conflicts with the document).
	Implicit bool `json:"implicit,omitempty"`
}

// Request-key limits (API.md "Exactly-once writes").
const (
	// RequestKeyWindow is how long a write's first answer is kept:
	// the webhooks' window, one rule for the header.
	RequestKeyWindow = IdempotencyWindow
	// pruneRequestsPerWrite bounds the expired records a keyed write
	// removes, so expiry keeps up (each write adds one) at a bounded cost.
	pruneRequestsPerWrite = 16
)

// CheckIdempotencyKey says whether k is a valid Idempotency-Key: 1 to
// MaxIdempotencyKeyBytes printable ASCII characters (space to tilde).
func CheckIdempotencyKey(k string) bool {
	if k == "" || len(k) > MaxIdempotencyKeyBytes {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// requestRecord is a keyed write's first answer.
type requestRecord struct {
	Hash string          `json:"hash"`
	At   time.Time       `json:"at"`
	Op   Op              `json:"op"`
	Doc  string          `json:"doc,omitempty"`
	Type string          `json:"type,omitempty"`
	Val  json.RawMessage `json:"value,omitempty"`
}

func requestID(user, key string) string {
	sum := sha256.Sum256([]byte(user + "\x00" + key))
	return hex.EncodeToString(sum[:])
}

func requestKey(site, id string) []byte { return []byte(pfxRequest + sk(site) + "/" + id) }

func requestDueKey(at time.Time, site, id string) []byte {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(at.UnixNano()))
	return []byte(pfxRequestDue + hex.EncodeToString(ts[:]) + "/" + sk(site) + "/" + id)
}

// applyOnce applies c (which carries c.Idem) unless its key has a live
// record: then it answers the recorded result, or refuses a different
// request under the same key.
func applyOnce(t *tx, c *Command, fn applyFunc) (any, error) {
	k := c.Idem
	if !CheckIdempotencyKey(k.Key) || len(k.Hash) > 128 || len(k.Doc) > MaxKeyBytes {
		return nil, Invalid("Idempotency-Key", fmt.Sprintf("'Idempotency-Key' must be 1 to %d printable ASCII characters", MaxIdempotencyKeyBytes))
	}
	if err := pruneRequests(t, c.At); err != nil {
		return nil, err
	}
	id := requestID(c.User, k.Key)
	key := requestKey(c.Site, id)
	var rec requestRecord
	found := false
	switch err := t.getJSON(key, &rec); {
	case err == nil:
		found = true
		if c.At.Sub(rec.At) >= RequestKeyWindow {
			break // expired, not yet pruned: as if absent
		}
		live := true
		if rec.Doc != "" {
			ok, err := t.exists(docKey(c.Site, rec.Doc))
			if err != nil {
				return nil, err
			}
			live = ok
		}
		if !live {
			break
		}
		if rec.Hash != k.Hash {
			if k.Implicit {
				break // applied as usual: the create conflicts
			}
			return nil, &ConflictError{Msg: "Idempotency-Key was already used with a different request"}
		}
		return DecodeResultValue(rec.Type, rec.Val)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	v, err := runOp(t, c, fn)
	if err != nil {
		return v, err
	}
	typ, raw, err := EncodeResultValue(v)
	if err != nil {
		return nil, Invalid("Idempotency-Key", "'Idempotency-Key' is not supported on this request")
	}
	if found {
		if err := t.del(requestDueKey(rec.At, c.Site, id)); err != nil {
			return nil, err
		}
	}
	if err := t.setJSON(key, requestRecord{Hash: k.Hash, At: c.At, Op: c.Op, Doc: k.Doc, Type: typ, Val: raw}); err != nil {
		return nil, err
	}
	if err := t.set(requestDueKey(c.At, c.Site, id), nil); err != nil {
		return nil, err
	}
	return v, nil
}

// pruneRequests removes up to pruneRequestsPerWrite records older than
// RequestKeyWindow at now (the command's time, so every node removes the
// same ones).
func pruneRequests(t *tx, now time.Time) error {
	cut := now.Add(-RequestKeyWindow).UnixNano()
	var old [][]byte
	err := t.each([]byte(pfxRequestDue), func(key, _ []byte) error {
		rest := key[len(pfxRequestDue):]
		if len(rest) < 17 || len(old) >= pruneRequestsPerWrite {
			return errStop
		}
		b, err := hex.DecodeString(string(rest[:16]))
		if err != nil || int64(binary.BigEndian.Uint64(b)) > cut {
			return errStop
		}
		old = append(old, append([]byte(nil), key...))
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	for _, k := range old {
		rest := string(k[len(pfxRequestDue)+17:]) // <site>/<id>
		if err := t.del([]byte(pfxRequest + rest)); err != nil {
			return err
		}
		if err := t.del(k); err != nil {
			return err
		}
	}
	return nil
}

// resultTypes are the types appliers return as Result.Value, by name:
// what a request record keeps and what a forwarded write carries back
// (node/cluster.go). A result of another type cannot be recorded.
var resultTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, v := range []any{
		"", int(0), int64(0), uint64(0), float64(0), true,
		&Document{}, Document{},
		&AddDocumentsResult{}, AddDocumentsResult{},
		&DeleteTagResult{}, DeleteTagResult{},
		MoveFolderResult{}, &MoveFolderResult{},
		FolderMoveJob{}, &FolderMoveJob{},
		ActionResult{}, &ActionResult{},
		WebhookDocumentResult{}, &WebhookDocumentResult{},
		IntakeRecord{}, &IntakeRecord{}, IntakeProfile{}, &IntakeProfile{},
	} {
		t := reflect.TypeOf(v)
		m[t.String()] = t
	}
	return m
}()

// EncodeResultValue is a Result.Value as its type name and JSON.
func EncodeResultValue(v any) (string, json.RawMessage, error) {
	if v == nil {
		return "", nil, nil
	}
	t := reflect.TypeOf(v)
	if _, ok := resultTypes[t.String()]; !ok {
		return t.String(), nil, fmt.Errorf("result type %s is not encoded", t)
	}
	b, err := json.Marshal(v)
	return t.String(), b, err
}

// DecodeResultValue is the inverse of EncodeResultValue.
func DecodeResultValue(name string, raw json.RawMessage) (any, error) {
	if name == "" {
		return nil, nil
	}
	t, ok := resultTypes[name]
	if !ok || raw == nil {
		return nil, fmt.Errorf("result type %s is not encoded", name)
	}
	if t.Kind() == reflect.Pointer {
		p := reflect.New(t.Elem())
		if err := json.Unmarshal(raw, p.Interface()); err != nil {
			return nil, err
		}
		return p.Interface(), nil
	}
	p := reflect.New(t)
	if err := json.Unmarshal(raw, p.Interface()); err != nil {
		return nil, err
	}
	return p.Elem().Interface(), nil
}
