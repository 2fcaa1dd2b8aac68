package storage

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned when a record does not exist.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned when a write would violate a uniqueness rule,
// for example a client-supplied documentId that is already taken.
var ErrConflict = errors.New("conflict")

// ErrClosed is returned by Apply after Close.
var ErrClosed = errors.New("storage closed")

// ErrMissingChunk is returned when a content commit refers to a chunk that
// was never written.
var ErrMissingChunk = errors.New("missing content chunk")

// ValidationItem is one FormKiQ validation error: a field key (may be empty)
// and its message, which goes to the client verbatim.
type ValidationItem struct {
	Key string `json:"key,omitempty"`
	Msg string `json:"error"`
}

// ValidationError carries one or more validation failures. The server
// renders it as FormKiQ's {"errors":[{"key","error"}]} with status 400.
type ValidationError struct {
	Items []ValidationItem
}

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Items))
	for _, it := range e.Items {
		if it.Key != "" {
			parts = append(parts, it.Key+": "+it.Msg)
			continue
		}
		parts = append(parts, it.Msg)
	}
	return "validation: " + strings.Join(parts, "; ")
}

// Invalid returns a ValidationError with a single item.
func Invalid(key, msg string) *ValidationError {
	return &ValidationError{Items: []ValidationItem{{Key: key, Msg: msg}}}
}

// NotFoundError is an ErrNotFound with the FormKiQ message the client sees,
// for example "Document <id> not found.".
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, ErrNotFound) match.
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// ConflictError is an ErrConflict with the FormKiQ message the client sees.
type ConflictError struct{ Msg string }

func (e *ConflictError) Error() string { return e.Msg }

// Unwrap lets errors.Is(err, ErrConflict) match.
func (e *ConflictError) Unwrap() error { return ErrConflict }

func docNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
}

// OutcomeUnknownError is a write that may or may not have been applied,
// and may still be: in a cluster, the forward to the leader broke after
// it was sent, or the leader lost its leadership after proposing it. The
// server answers it apart from a refused write (504, API.md "Exactly-once
// writes"); to the schedulers it is a refused write (errors.As finds a
// *WriteRefusedError of kind KindIOError), so they record no failure in
// place of an outcome that may yet commit.
type OutcomeUnknownError struct{ Reason string }

func (e *OutcomeUnknownError) Error() string { return "outcome unknown: " + e.Reason }

func (e *OutcomeUnknownError) Unwrap() error {
	return &WriteRefusedError{Kind: KindIOError, Reason: e.Reason}
}
