package server

import (
	"errors"
	"fmt"
	"net/http"

	"quire/storage"
)

// Errors answer in FormKiQ's two shapes (SERVICE-SPEC.md §7): validation
// errors as {"errors":[{"key","error"}]}, everything else as {"message"}.

// apiError is an error with a status code and a FormKiQ {"message"} body.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errStatus(status int, msg string) error { return &apiError{status: status, msg: msg} }

func badRequest(msg string) error { return &apiError{status: http.StatusBadRequest, msg: msg} }

// invalid returns a single-item FormKiQ validation error.
func invalid(key, msg string) error { return storage.Invalid(key, msg) }

type messageBody struct {
	Message string `json:"message"`
}

// headerWriteOutcome marks an answer whose write may or may not have
// been applied.
const headerWriteOutcome = "Quire-Write-Outcome"

var errInvalidBody = errors.New("invalid body")

// errNoBody is an empty (or JSON null) body: "invalid body" unless the
// route answers it with FormKiQ's "request body is required".
var errNoBody = fmt.Errorf("no body: %w", errInvalidBody)

// errBodyRequired is FormKiQ's answer to POST /documents without a body.
var errBodyRequired = badRequest("request body is required")

// checkErrors returns a ValidationError for items, or nil when empty.
func checkErrors(items []storage.ValidationItem) error {
	if len(items) == 0 {
		return nil
	}
	return &storage.ValidationError{Items: items}
}

// errBodyTooLarge answers a body over the limit: a 400, as FormKiQ's
// validation failures are, never a half-read request.
var errBodyTooLarge = &apiError{status: http.StatusBadRequest, msg: "Request body too large"}
