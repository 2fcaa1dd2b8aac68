package api

import (
	"errors"
	"fmt"
	"net/http"

	"quire/storage"
)

// Errors answer in FormKiQ's two shapes (SERVICE-SPEC.md §7): validation
// errors as {"errors":[{"key","error"}]}, everything else as {"message"}.

// Error is an error with a status code and a FormKiQ {"message"} body.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func ErrStatus(status int, msg string) error { return &Error{Status: status, Msg: msg} }

func BadRequest(msg string) error { return &Error{Status: http.StatusBadRequest, Msg: msg} }

// Invalid returns a single-item FormKiQ validation error.
func Invalid(key, msg string) error { return storage.Invalid(key, msg) }

type MessageBody struct {
	Message string `json:"message"`
}

// HeaderWriteOutcome marks an answer whose write may or may not have
// been applied.
const HeaderWriteOutcome = "Quire-Write-Outcome"

var ErrInvalidBody = errors.New("invalid body")

// ErrNoBody is an empty (or JSON null) body: "invalid body" unless the
// route answers it with FormKiQ's "request body is required".
var ErrNoBody = fmt.Errorf("no body: %w", ErrInvalidBody)

// ErrBodyRequired is FormKiQ's answer to POST /documents without a body.
var ErrBodyRequired = BadRequest("request body is required")

// CheckErrors returns a ValidationError for items, or nil when empty.
func CheckErrors(items []storage.ValidationItem) error {
	if len(items) == 0 {
		return nil
	}
	return &storage.ValidationError{Items: items}
}

// ErrBodyTooLarge answers a body over the limit: a 400, as FormKiQ's
// validation failures are, never a half-read request.
var ErrBodyTooLarge = &Error{Status: http.StatusBadRequest, Msg: "Request body too large"}
