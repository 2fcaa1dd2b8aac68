package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"quire/server/internal/testhooks"
	"quire/storage"
)

// Exactly-once writes (API.md "Exactly-once writes", cluster/DESIGN.md
// "Consistency"): a write sent with an Idempotency-Key is applied at most
// once per key, site and caller; a retry with the key answers the first
// request's answer, as first sent. The key rides in every command the
// request applies (storage.Command.Idem, numbered), and the store records
// each in the transaction that applies it (storage/requests.go); the
// request's final answer is recorded on its first command's record by one
// more command (OpFinishRequest). So it holds across restarts and
// failover, on every node, and a request cut off between two of its
// commands is completed, not repeated, by its retry.

// HeaderIdempotencyKey is the request header.
const HeaderIdempotencyKey = "Idempotency-Key"

// LocalIdemKey holds a request's valid, honoured Idempotency-Key.
const LocalIdemKey = "idempotencyKey"

// requestHash identifies a request for its Idempotency-Key: method, path
// and query (the URI as sent) and the body (bufferBody).
func (r *Request) requestHash() string {
	h := sha256.New()
	h.Write([]byte(r.Method()))
	h.Write([]byte{0})
	h.Write(r.Request().Header.RequestURI())
	h.Write([]byte{0})
	h.Write(r.bodySum)
	return hex.EncodeToString(h.Sum(nil))
}

// bufferBody reads a keyed request's body (at most limit bytes) so that
// its digest is known before the handler runs; the handler then reads it
// from memory as it would from the connection.
func (r *Request) bufferBody(limit int) error {
	b, err := r.bodyBytes(limit)
	if err != nil {
		return err
	}
	body := bytes.Clone(b)
	sum := sha256.Sum256(body)
	r.bodySum = sum[:]
	r.Locals(localBody, &stickyReader{r: bytes.NewReader(body)})
	return nil
}

// keyedRequest is a request that carries an Idempotency-Key: every
// command it applies carries the key with its number (KeyedApplier).
type keyedRequest struct {
	key, hash, site, user string
	mu                    sync.Mutex
	seq                   int
	// wrote: a command carrying the key was applied (its record holds
	// it), so the request's answer is recorded when it ends.
	wrote bool
	// ids counts the ids the request picked (NewID).
	ids int
	// rerun: the request's record was found before it ran (a run cut
	// off after it wrote): its commands are expected to answer their
	// recorded results.
	rerun bool
	// fresh: a command carrying the key was applied by this run, not
	// answered from its record. A run that wrote without a fresh command
	// only replayed another run's writes: its answer is a replay.
	fresh bool
}

// errRacingRun stops a run of a keyed request whose command answered a
// recorded result though no record was found before it ran: another run
// of the request (the client's retry racing its first attempt) wrote
// first, and its answer is the answer (serveKeyed waits for it).
var errRacingRun = errors.New("server: another run of this keyed request wrote first")

// NewID is a new id for something the request creates. A keyed request
// picks its ids from its key, request and time, so that a run of it cut
// off after it wrote and run again by its retry (at the first run's
// time, serveKeyed) picks the same ones and answers as the first run
// would have; any other request picks a random UUID.
func (r *Request) NewID() string {
	k := keyedFrom(r.UserContext())
	if k == nil {
		return uuid.NewString()
	}
	k.mu.Lock()
	n := k.ids
	k.ids++
	k.mu.Unlock()
	h := sha256.New()
	fmt.Fprintf(h, "quire id\x00%s\x00%s\x00%s\x00%s\x00%d\x00%d", k.site, k.user, k.key, k.hash, r.Now.UnixNano(), n)
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return uuid.UUID(b).String()
}

type keyedCtxKey struct{}

func keyedFrom(ctx context.Context) *keyedRequest {
	k, _ := ctx.Value(keyedCtxKey{}).(*keyedRequest)
	return k
}

// KeyedApplier gives every command applied for a keyed request (by its
// context) the request's key, numbered in the order the handler applies
// them: one place, whatever path a handler takes to the store.
type KeyedApplier struct{ storage.Applier }

// unkeyedOps are applied without the key: chunk commands are idempotent
// by their content hash and their binary wire form carries no key; the
// answer itself is recorded by OpFinishRequest.
var unkeyedOps = map[storage.Op]bool{storage.OpPutChunks: true, storage.OpFinishRequest: true}

func (a KeyedApplier) Apply(ctx context.Context, cmd *storage.Command) (storage.Result, error) {
	k := keyedFrom(ctx)
	if k == nil || cmd.Idem != nil || unkeyedOps[cmd.Op] {
		return a.Applier.Apply(ctx, cmd)
	}
	k.mu.Lock()
	cmd.Idem = &storage.Idempotency{Key: k.key, Hash: k.hash, Seq: k.seq, Site: k.site, User: k.user, Scoped: true}
	k.seq++
	k.mu.Unlock()
	res, err := a.Applier.Apply(ctx, cmd)
	if err == nil {
		k.mu.Lock()
		racing := res.Replayed && !k.rerun && !k.wrote
		if !racing {
			k.wrote = true
		}
		if !res.Replayed {
			k.fresh = true
		}
		k.mu.Unlock()
		if racing {
			return storage.Result{}, errRacingRun
		}
	}
	return res, err
}

// headerReplayed marks an answer given again from its record.
const headerReplayed = "Idempotent-Replayed"

// answerWait bounds how long a retry waits for the answer of a first
// request still running (or whose answer this node has yet to apply).
const answerWait = 5 * time.Second

// serveKeyed runs a keyed request: a request whose answer is recorded
// answers it again, as first sent, with nothing applied; a request that
// wrote has its answer recorded (OpFinishRequest) before it is sent. A
// request that was cut off after it wrote and before its answer was
// recorded is run again: each command it applied before answers its
// first result (storage/requests.go) and only the rest are applied.
func (s *Env) serveKeyed(r *Request, key string, run func() error) error {
	if err := r.bufferBody(s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	// A recorded answer belongs to one credential (issue 43): the key is
	// scoped by the site and the caller's credential, not its username,
	// which every API key of a creator and a delegation on its behalf
	// share.
	k := &keyedRequest{key: key, hash: r.requestHash(), site: r.Site, user: r.Principal.Credential()}
	st, err := s.DB.ReadRequest(k.site, k.user, key, r.Now)
	if err != nil {
		return err
	}
	if st != nil {
		if st.Hash != k.hash {
			return &storage.ConflictError{Msg: "Idempotency-Key was already used with a different request"}
		}
		// Never answered from the record up front: the request runs, so
		// its authorization (site role, folder permissions, whatever the
		// handler checks before it writes) is decided now, and its first
		// command answers the recorded answer (RequestReplayError below).
		// It runs at the first run's time, so that it picks the same ids
		// and times (NewID).
		r.Now = st.At.UTC()
		k.rerun = true
	}
	r.SetUserContext(context.WithValue(r.UserContext(), keyedCtxKey{}, k))
	err = run()
	var rp *storage.RequestReplayError
	if errors.As(err, &rp) {
		return replayAnswer(r, rp.Answer)
	}
	k.mu.Lock()
	wrote, fresh := k.wrote, k.fresh
	k.mu.Unlock()
	if errors.Is(err, errRacingRun) {
		return s.awaitAnswer(r, k, false, true)
	}
	if !wrote {
		// Nothing written under the key by this run: its answer stands,
		// unless another run of the request did write (a retry racing
		// the first, a first run cut off, a record this node applied
		// only now): then that run's answer is the answer.
		return s.keyedWithoutWrite(r, k, st != nil, err)
	}
	if err != nil {
		if herr := s.RenderError(r.Ctx, err); herr != nil {
			return herr
		}
	}
	resp := r.Response()
	status := resp.StatusCode()
	if status >= 500 || resp.IsBodyStream() || len(resp.Body()) > storage.MaxRequestAnswerBytes {
		return nil // not recorded: a retry runs again, replaying what was applied
	}
	ans := storage.RequestAnswer{Status: status, ContentType: string(resp.Header.ContentType()), Body: bytes.Clone(resp.Body())}
	cmd, cerr := storage.NewCommand(storage.OpFinishRequest, k.site, r.User(), r.Now, storage.FinishRequest{Key: key, Hash: k.hash, Answer: ans, Scope: k.user})
	if cerr == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.UserContext()), answerRecordWait)
		_, cerr = s.Deps.Applier.Apply(ctx, cmd)
		cancel()
	}
	if cerr != nil {
		// The write stands and this is its answer; a retry runs the
		// request again, each applied command answering its result.
		s.Log.Warn("keyed request: answer not recorded", "requestId", RequestID(r.Ctx), "route", RouteName(r.Ctx), "err", cerr)
	}
	if !fresh {
		// Every command of this run answered another run's result (a
		// resend after a first run whose answer never came, or racing
		// one still running): this is a replay. The answer recorded
		// first is the answer, as first sent; this run's own if it was
		// the first recorded.
		if st, rerr := s.DB.ReadRequest(k.site, k.user, key, r.Now); rerr == nil && st != nil && st.Hash == k.hash && st.Answer != nil {
			resetAnswer(r)
			return replayAnswer(r, *st.Answer)
		}
		r.Set(headerReplayed, "true")
	}
	return nil
}

// answerRecordWait bounds the recording of a keyed request's answer.
const answerRecordWait = 15 * time.Second

// keyedWithoutWrite ends a keyed request whose run wrote nothing under
// its key (err is the run's error). A success or a 5xx (no leader, an
// unknown outcome: the client is to retry) stands as it is; a 4xx is the
// answer only if no run of the request wrote: one that did (a retry
// racing the first, a first run cut off, a record this node applied only
// now) has the answer, waited for up to answerWait.
func (s *Env) keyedWithoutWrite(r *Request, k *keyedRequest, hadRecord bool, err error) error {
	if err != nil {
		if herr := s.RenderError(r.Ctx, err); herr != nil {
			return herr
		}
	}
	status := r.Response().StatusCode()
	// A refusal of the caller's rights is the answer whatever another
	// run recorded: authorization comes before any replay (issue 43).
	if status >= 500 || status < 400 && !hadRecord || status == http.StatusUnauthorized || status == http.StatusForbidden {
		return nil
	}
	return s.awaitAnswer(r, k, hadRecord, false)
}

// awaitAnswer answers a keyed request with the answer another run of it
// records, waiting up to answerWait; without a record the answer already
// rendered stands, unless racing (the leader answered from the record,
// which this node has yet to apply, and nothing is rendered): then it is
// waited for. Without an answer by then: a run that was itself the
// retry of a cut-off run (rerun) and could not reach its commands again
// answers the documented 409; any other is told to send the request
// again (504, unknown outcome), which then runs as such a retry.
func (s *Env) awaitAnswer(r *Request, k *keyedRequest, rerun, racing bool) error {
	deadline := time.Now().Add(testhooks.AnswerWait(answerWait))
	for {
		st, rerr := s.DB.ReadRequest(k.site, k.user, k.key, r.Now)
		if !racing && (rerr != nil || st == nil) {
			return nil // no run of this request wrote: this answer stands
		}
		resetAnswer(r)
		switch {
		case st == nil:
		case st.Hash != k.hash:
			return &storage.ConflictError{Msg: "Idempotency-Key was already used with a different request"}
		case st.Answer != nil:
			return replayAnswer(r, *st.Answer)
		}
		if time.Now().After(deadline) || r.UserContext().Err() != nil {
			if rerun {
				return &storage.ConflictError{Msg: storage.MsgRequestInterrupted}
			}
			return &storage.OutcomeUnknownError{Reason: msgAnotherRun}
		}
		select {
		case <-r.UserContext().Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// msgAnotherRun answers a keyed request whose first run (a request
// racing it) wrote and has no answer yet.
const msgAnotherRun = "Another request with this Idempotency-Key wrote first and has no answer yet (still running, or cut off): send the request again with the same Idempotency-Key to get its answer"

// resetAnswer clears the answer a run wrote, for another one.
func resetAnswer(r *Request) {
	r.Response().ResetBody()
	r.Response().Header.Del(fiber.HeaderContentType)
	r.Response().Header.Del(HeaderWriteOutcome)
	r.Status(http.StatusOK)
}

// replayAnswer sends a recorded answer as first sent.
func replayAnswer(r *Request, a storage.RequestAnswer) error {
	r.Set(headerReplayed, "true")
	if a.ContentType != "" {
		r.Set(fiber.HeaderContentType, a.ContentType)
	}
	return r.Status(a.Status).Send(a.Body)
}
