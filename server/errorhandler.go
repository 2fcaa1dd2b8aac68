package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/auth"
	"quire/pipeline/engine"
	"quire/server/internal/api"
	"quire/storage"
)

// errorsBody is FormKiQ's validation error shape.
type errorsBody struct {
	Errors []storage.ValidationItem `json:"errors"`
}

// outcomeBody answers a write whose outcome is unknown (504, with the
// header Quire-Write-Outcome: unknown): it may or may not have been
// applied, and may still be (API.md "Exactly-once writes").
type outcomeBody struct {
	Message string `json:"message"`
	Outcome string `json:"outcome"`
}

// errorHandler is the single place where errors become HTTP responses:
// validation errors get {"errors":[...]}, everything else {"message"}.
// Anything unexpected is a 500 with a generic body and a logged request id.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	var (
		ve *storage.ValidationError
		nf *storage.NotFoundError
		ce *storage.ConflictError
		gv *storage.GovernedError
		ae *api.Error
		au *auth.Error
		ac *storage.AccessError
		fe *fiber.Error
		wr *storage.WriteRefusedError
		ou *storage.OutcomeUnknownError
		le *storage.LimitError
		re *storage.RequestError
		se *json.SyntaxError
		te *json.UnmarshalTypeError
		mp *engine.MissingProgramError
		pb *api.ErrPasswordBusy
	)
	status, body := http.StatusInternalServerError, any(api.MessageBody{Message: "Internal Server Error"})
	switch {
	case errors.As(err, &ve):
		status, body = http.StatusBadRequest, errorsBody{Errors: ve.Items}
	case errors.As(err, &nf):
		status, body = http.StatusNotFound, api.MessageBody{Message: nf.Msg}
	case errors.As(err, &ce):
		status, body = http.StatusConflict, api.MessageBody{Message: ce.Msg}
	case errors.As(err, &gv): // GOVERNANCE retention: the document cannot change until its end
		status, body = http.StatusConflict, api.MessageBody{Message: gv.Msg}
	case errors.As(err, &ou): // before wr, which it unwraps to
		status, body = http.StatusGatewayTimeout, outcomeBody{Message: ou.Reason, Outcome: "unknown"}
		c.Set(api.HeaderWriteOutcome, "unknown")
	case errors.As(err, &wr):
		status, body = writeRefusedStatus(wr), api.MessageBody{Message: wr.Reason}
	case errors.As(err, &le):
		status, body = http.StatusTooManyRequests, api.MessageBody{Message: le.Msg}
	case errors.As(err, &pb): // the sign-in budget or busy hash slots (passwords.go)
		status, body = http.StatusTooManyRequests, api.MessageBody{Message: pb.Error()}
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(max(1, (pb.Retry+time.Second-1)/time.Second))))
		s.metrics.ratelimited.WithLabelValues(api.RouteName(c)).Inc()
	case errors.As(err, &re):
		status, body = http.StatusBadRequest, api.MessageBody{Message: re.Msg}
	case errors.As(err, &ae):
		status, body = ae.Status, api.MessageBody{Message: ae.Msg}
	case errors.As(err, &au):
		status, body = au.Status, api.MessageBody{Message: au.Msg}
	case errors.As(err, &ac):
		status, body = http.StatusUnauthorized, api.MessageBody{Message: ac.Msg} // FormKiQ's access denials are 401
	case errors.Is(err, storage.ErrBadToken):
		status, body = http.StatusBadRequest, api.MessageBody{Message: "Invalid Next token"}
	case errors.As(err, &se), errors.As(err, &te), errors.Is(err, api.ErrInvalidBody):
		status, body = http.StatusBadRequest, errorsBody{Errors: []storage.ValidationItem{{Msg: "invalid body"}}}
	case errors.As(err, &fe):
		status = fe.Code
		switch fe.Code {
		case http.StatusNotFound, http.StatusMethodNotAllowed:
			status, body = http.StatusNotFound, api.MessageBody{Message: c.Path() + " request handler not found"}
		case http.StatusRequestEntityTooLarge:
			status, body = http.StatusBadRequest, api.MessageBody{Message: "Request body too large"}
		default:
			body = api.MessageBody{Message: fe.Message}
		}
	case errors.Is(err, storage.ErrNotFound):
		status, body = http.StatusNotFound, api.MessageBody{Message: "Not found"}
	case errors.As(err, &mp): // an engine is not installed: the operator's to fix, never a 500
		status, body = http.StatusServiceUnavailable, api.MessageBody{Message: "engine not available: " + mp.Name + " is not installed on this server (Debian package " + mp.Pkg + ")"}
	}
	if status >= 500 {
		s.Log.Error("request failed", "requestId", api.RequestID(c), "method", c.Method(), "route", api.RouteName(c), "err", err)
	}
	return c.Status(status).JSON(body)
}

// writeRefusedStatus answers a refused write: 507 Insufficient Storage
// while the disk is (or was, at open) too full, which clears by itself
// when space is freed; 503 after an I/O error, which needs an operator
// (no Retry-After: retrying will not help until then).
func writeRefusedStatus(e *storage.WriteRefusedError) int {
	if e.Kind == storage.KindIOError {
		return http.StatusServiceUnavailable
	}
	return http.StatusInsufficientStorage
}
