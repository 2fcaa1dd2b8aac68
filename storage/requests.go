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
	"strconv"
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
	// Seq numbers the commands of one keyed request (0 first): each is
	// recorded under the key and its number, so a request re-run after
	// an interruption gets the results of the commands it applied before
	// and applies only the rest. Seq 0's record also holds the request's
	// final answer once the server records it (OpFinishRequest).
	Seq int `json:"seq,omitempty"`
	// Scoped says the key belongs to Site and User (the request's site
	// and caller) rather than the command's own, which may differ (a
	// request's command for another site, or made on no one's behalf).
	Scoped bool   `json:"scoped,omitempty"`
	Site   string `json:"site,omitempty"`
	User   string `json:"user,omitempty"`
}

// RequestAnswer is a keyed request's final HTTP answer, as first sent.
type RequestAnswer struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// MaxRequestAnswerBytes bounds the body of a recorded answer; a larger
// answer is not recorded (a retry then runs the request again, every
// command it applied answering its first result).
const MaxRequestAnswerBytes = 256 << 10

// RequestReplayError answers a keyed command whose request has a
// recorded final answer: the server sends that answer, as first sent,
// and applies nothing.
type RequestReplayError struct{ Answer RequestAnswer }

func (e *RequestReplayError) Error() string {
	return fmt.Sprintf("request already answered (%d) under its Idempotency-Key", e.Answer.Status)
}

// FinishRequest is OpFinishRequest's payload: the final answer of the
// request whose commands carried Key and Hash (the site is the command's,
// the caller Scope, or the command's user).
type FinishRequest struct {
	Key    string        `json:"key"`
	Hash   string        `json:"hash"`
	Answer RequestAnswer `json:"answer"`
	// Scope is the caller's credential the key belongs to (Idempotency
	// User of the request's commands); without it (commands logged
	// before it was added) the command's user.
	Scope string `json:"scope,omitempty"`
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
	Hash string `json:"hash"`
	// Answer is the request's final answer (seq 0 only; OpFinishRequest);
	// nil while the request runs, or when it was cut off before its
	// answer was recorded.
	Answer *RequestAnswer  `json:"answer,omitempty"`
	At     time.Time       `json:"at"`
	Op     Op              `json:"op"`
	Doc    string          `json:"doc,omitempty"`
	Type   string          `json:"type,omitempty"`
	Val    json.RawMessage `json:"value,omitempty"`
	// Opaque marks a result whose type is not encoded (resultTypes): a
	// retry gets the request's final answer, or, without one, a 409.
	Opaque bool `json:"opaque,omitempty"`
}

// maxRequestCommands bounds the commands of one keyed request.
const maxRequestCommands = 1 << 16

const (
	msgKeyReused     = "Idempotency-Key was already used with a different request"
	msgNotReplayable = "Idempotency-Key: the first request with this key was interrupted after it wrote and before its answer was recorded; its answer cannot be given again (read the state, or send the request with a new key)"
)

// MsgRequestInterrupted answers a retry of a keyed request that was cut
// off after it wrote and before its answer was recorded, when the retry
// cannot reach the same answer (API.md "Exactly-once writes").
const MsgRequestInterrupted = msgNotReplayable

// applyFinishRequest records a keyed request's final answer on the
// record of its first command: from then on its key answers that, as
// first sent. Without that record (expired, another request's, never
// written) or with an answer already, it changes nothing.
func applyFinishRequest(t *tx, c *Command) (any, error) {
	p, err := decode[FinishRequest](c)
	if err != nil {
		return nil, err
	}
	if !CheckIdempotencyKey(p.Key) || len(p.Answer.Body) > MaxRequestAnswerBytes || len(p.Answer.ContentType) > 256 || p.Answer.Status < 100 || p.Answer.Status > 599 {
		return nil, Invalid("Idempotency-Key", "invalid request answer")
	}
	scope := c.User
	if p.Scope != "" {
		if len(p.Scope) > MaxKeyBytes {
			return nil, Invalid("Idempotency-Key", "invalid request answer")
		}
		scope = p.Scope
	}
	id := requestID(scope, p.Key, 0)
	key := requestKey(c.Site, id)
	var rec requestRecord
	switch err := t.getJSON(key, &rec); {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if rec.Hash != p.Hash || rec.Answer != nil || c.At.Sub(rec.At) >= RequestKeyWindow {
		return nil, nil
	}
	a := p.Answer
	rec.Answer = &a
	return nil, t.setJSON(key, rec)
}

// RequestState is what the store holds of a keyed request (ReadRequest).
type RequestState struct {
	Hash string
	// At is the time of the request's first command (the request's time).
	At time.Time
	// Answer is its recorded final answer, nil while none is.
	Answer *RequestAnswer
}

// ReadRequest is the live record of the keyed request of key by user in
// site at now (its first command's), or nil without one.
func (d *DB) ReadRequest(site, user, key string, now time.Time) (*RequestState, error) {
	if !CheckIdempotencyKey(key) {
		return nil, nil
	}
	var rec requestRecord
	err := d.view(func(t *tx) error { return t.getJSON(requestKey(site, requestID(user, key, 0)), &rec) })
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if now.Sub(rec.At) >= RequestKeyWindow {
		return nil, nil
	}
	return &RequestState{Hash: rec.Hash, At: rec.At, Answer: rec.Answer}, nil
}

func requestID(user, key string, seq int) string {
	s := user + "\x00" + key
	if seq > 0 {
		s += "\x00" + strconv.Itoa(seq)
	}
	sum := sha256.Sum256([]byte(s))
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
	if !CheckIdempotencyKey(k.Key) || len(k.Hash) > 128 || len(k.Doc) > MaxKeyBytes || len(k.Site) > MaxKeyBytes || len(k.User) > MaxKeyBytes || k.Seq < 0 || k.Seq > maxRequestCommands {
		return nil, Invalid("Idempotency-Key", fmt.Sprintf("'Idempotency-Key' must be 1 to %d printable ASCII characters", MaxIdempotencyKeyBytes))
	}
	if err := pruneRequests(t, c.At); err != nil {
		return nil, err
	}
	site, user := c.Site, c.User
	if k.Scoped {
		site, user = k.Site, k.User
	}
	if k.Seq > 0 {
		// A later command of a request already answered answers that.
		var first requestRecord
		switch err := t.getJSON(requestKey(site, requestID(user, k.Key, 0)), &first); {
		case err == nil:
			if c.At.Sub(first.At) < RequestKeyWindow && first.Hash == k.Hash && first.Answer != nil {
				return nil, &RequestReplayError{Answer: *first.Answer}
			}
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	id := requestID(user, k.Key, k.Seq)
	key := requestKey(site, id)
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
			return nil, &ConflictError{Msg: msgKeyReused}
		}
		if rec.Answer != nil {
			return nil, &RequestReplayError{Answer: *rec.Answer}
		}
		if rec.Opaque {
			return nil, &ConflictError{Msg: msgNotReplayable}
		}
		t.replayed = true
		return DecodeResultValue(rec.Type, rec.Val)
	case !errors.Is(err, ErrNotFound):
		return nil, err
	}
	// A result that is recorded opaque (without its value): the
	// request's final answer (OpFinishRequest) is what a retry gets.
	v, typ, raw, opaque, err := runRecorded(t, c, fn)
	if err != nil {
		return v, err
	}
	if found {
		if err := t.del(requestDueKey(rec.At, site, id)); err != nil {
			return nil, err
		}
	}
	if err := t.setJSON(key, requestRecord{Hash: k.Hash, At: c.At, Op: c.Op, Doc: k.Doc, Type: typ, Val: raw, Opaque: opaque}); err != nil {
		return nil, err
	}
	if err := t.set(requestDueKey(c.At, site, id), nil); err != nil {
		return nil, err
	}
	return v, nil
}

// runRecorded runs c's applier and encodes its result for a record (a
// request's or a command id's); a result of a type not in resultTypes is
// recorded opaque, without its value.
func runRecorded(t *tx, c *Command, fn applyFunc) (v any, typ string, raw json.RawMessage, opaque bool, err error) {
	if v, err = runOp(t, c, fn); err != nil {
		return v, "", nil, false, err
	}
	if typ, raw, err = EncodeResultValue(v); err != nil {
		return v, "", nil, true, nil
	}
	return v, typ, raw, false, nil
}

// pruneRequests removes up to pruneRequestsPerWrite records older than
// RequestKeyWindow at now (the command's time, so every node removes the
// same ones).
func pruneRequests(t *tx, now time.Time) error {
	return pruneDue(t, pfxRequestDue, pfxRequest, now.Add(-RequestKeyWindow), pruneRequestsPerWrite)
}

// pruneDue removes up to limit records whose due keys (dueprefix, the
// time as 16 hex digits of big-endian nanoseconds, "/", the record's
// key after its prefix) are at or before cut, with their records
// (prefix + that key): the expiry of request records and command ids.
// The due keys sort by time, so the walk stops at the first later one.
func pruneDue(t *tx, duePrefix, prefix string, cut time.Time, limit int) error {
	cutNano := cut.UnixNano()
	var old [][]byte
	err := t.each([]byte(duePrefix), func(key, _ []byte) error {
		rest := key[len(duePrefix):]
		if len(rest) < 17 || len(old) >= limit {
			return errStop
		}
		b, err := hex.DecodeString(string(rest[:16]))
		if err != nil || int64(binary.BigEndian.Uint64(b)) > cutNano {
			return errStop
		}
		old = append(old, append([]byte(nil), key...))
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	for _, k := range old {
		if err := t.del([]byte(prefix + string(k[len(duePrefix)+17:]))); err != nil {
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
		&Envelope{}, Envelope{},
		&RetentionDueResult{}, RetentionDueResult{},
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
