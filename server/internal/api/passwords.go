package api

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"quire/auth"
	"quire/ratelimit"
)

// Every password check spends one budget (issue 43, finding 4). A wrong
// password costs an argon2 hash (19 MiB, tens of ms; two at a time), so a
// client flooding any door that checks passwords (POST /login and the
// other sign-in routes, WebDAV Basic, SMTP AUTH, anything later) must
// spend the same per-address sign-in budget, the signin rate-limit class,
// and must never make a real sign-in wait behind its hashes:
//
//   - the sign-in routes are charged by the route table (their class is
//     signin); WebDAV and SMTP AUTH are charged here, for each password
//     actually checked (a cached WebDAV credential or an API key costs no
//     hash and no budget);
//   - one address hashes one password at a time (an office behind one
//     NAT address still signs in one after the other, each quickly), and
//     the wait for that and for one of the two hash slots is bounded by
//     hashWait: past it the answer is busy (429 with Retry-After, SMTP
//     454), never a queue.
//
// So a flood from one address holds at most one slot, and a sign-in from
// another address finds the other.

// hashWait bounds the wait for the address's turn and for a hash slot.
const hashWait = 500 * time.Millisecond

// busyRetry is the Retry-After of a busy answer.
const busyRetry = time.Second

// ErrPasswordBusy is a password check refused for the budget or for busy
// hash slots; Retry says when to try again.
type ErrPasswordBusy struct{ Retry time.Duration }

func (e *ErrPasswordBusy) Error() string {
	return fmt.Sprintf("Too many sign-in attempts: try again in %d s", int(max(1, e.Retry.Round(time.Second)/time.Second)))
}

// addrGate lets one password check per client address run at a time.
type addrGate struct {
	mu sync.Mutex
	m  map[string]*addrTurn
}

type addrTurn struct {
	ch chan struct{}
	n  int // holders and waiters
}

// enter waits at most wait for addr's turn; leave must follow a true.
func (g *addrGate) enter(addr string, wait time.Duration) bool {
	g.mu.Lock()
	if g.m == nil {
		g.m = map[string]*addrTurn{}
	}
	t := g.m[addr]
	if t == nil {
		t = &addrTurn{ch: make(chan struct{}, 1)}
		g.m[addr] = t
	}
	t.n++
	g.mu.Unlock()
	select {
	case t.ch <- struct{}{}:
		return true
	default:
	}
	tm := time.NewTimer(wait)
	defer tm.Stop()
	select {
	case t.ch <- struct{}{}:
		return true
	case <-tm.C:
		g.done(addr, t)
		return false
	}
}

func (g *addrGate) leave(addr string) {
	g.mu.Lock()
	t := g.m[addr]
	g.mu.Unlock()
	<-t.ch
	g.done(addr, t)
}

func (g *addrGate) done(addr string, t *addrTurn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.n--; t.n == 0 {
		delete(g.m, addr)
	}
}

// PasswordCheck says who a password check is for: the client's address,
// and whether the route table already charged the sign-in budget for
// this request (the signin class routes).
type PasswordCheck struct {
	Addr    string
	charged bool
}

// hashWork runs one argon2 operation (a check or a hash) for a client: it
// spends the client's sign-in budget unless the route did, waits its
// address's turn and a slot, each at most hashWait, and answers
// *ErrPasswordBusy instead of waiting longer.
func (s *Env) hashWork(pc PasswordCheck, work func(wait time.Duration) error) error {
	if !pc.charged {
		if ok, wait := s.Limits.Allow(ratelimit.SignIn, pc.Addr, s.Now()); !ok {
			return &ErrPasswordBusy{Retry: wait}
		}
	}
	start := time.Now()
	if !s.PasswordGate.enter(pc.Addr, hashWait) {
		return &ErrPasswordBusy{Retry: busyRetry}
	}
	defer s.PasswordGate.leave(pc.Addr)
	err := work(max(0, hashWait-time.Since(start)))
	if errors.Is(err, auth.ErrHashBusy) {
		return &ErrPasswordBusy{Retry: busyRetry}
	}
	return err
}

// CheckPassword is every check of a password against a stored hash
// (hashWork; an empty hash checks a dummy, matching nothing).
func (s *Env) CheckPassword(pc PasswordCheck, hash, pw string) (ok bool, err error) {
	err = s.hashWork(pc, func(wait time.Duration) error {
		ok, err = auth.VerifyPasswordWithin(hash, pw, wait)
		return err
	})
	return ok, err
}

// HashNewPassword hashes a password a client sets on an anonymous route
// (hashWork).
func (s *Env) HashNewPassword(pc PasswordCheck, pw string) (h string, err error) {
	err = s.hashWork(pc, func(wait time.Duration) error {
		h, err = auth.HashPasswordWithin(pw, wait)
		return err
	})
	return h, err
}

// SignInRoute is the PasswordCheck of a request on a signin-class route.
func SignInRoute(r *Request) PasswordCheck { return PasswordCheck{Addr: r.IP(), charged: true} }
