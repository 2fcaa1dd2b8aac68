package server

import (
	"quire/storage"
)

// apply builds a command for the request's site, user and time and applies
// it. Commands never take the request's fasthttp context: fasthttp does not
// cancel it on disconnect, and reading it races with shutdown.
func (s *env) apply(r *reqCtx, op storage.Op, payload any) (storage.Result, error) {
	cmd, err := storage.NewCommand(op, r.site, r.user(), r.now, payload)
	if err != nil {
		return storage.Result{}, err
	}
	cmd.Via = via(r)
	if k := r.implicitKey; k != nil && keyedFrom(r.UserContext()) == nil {
		// A client-chosen documentId stands for the key, once.
		r.implicitKey = nil
		idem := *k
		idem.Hash = r.requestHash()
		cmd.Idem = &idem
	}
	if indexFed[op] {
		if err := s.gate.wait(r.UserContext()); err != nil {
			return storage.Result{}, err
		}
	}
	return s.applier.Apply(r.UserContext(), cmd)
}
