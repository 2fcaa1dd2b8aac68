package api

import (
	"quire/storage"
)

// Apply builds a command for the request's site, user and time and applies
// it. Commands never take the request's fasthttp context: fasthttp does not
// cancel it on disconnect, and reading it races with shutdown.
func (s *Env) Apply(r *Request, op storage.Op, payload any) (storage.Result, error) {
	cmd, err := storage.NewCommand(op, r.Site, r.User(), r.Now, payload)
	if err != nil {
		return storage.Result{}, err
	}
	cmd.Via = Via(r)
	if indexFed[op] {
		if err := s.Gate.Wait(r.UserContext()); err != nil {
			return storage.Result{}, err
		}
	}
	return s.Deps.Applier.Apply(r.UserContext(), cmd)
}
