package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"quire/pipeline/engine"
	"quire/pipeline/llmchat"
	"quire/pipeline/mailer"
	"quire/storage"
)

// Job is one run of an action.
type Job struct {
	p       *Pipeline
	Site    string
	Doc     *storage.Document
	Action  *storage.Action
	Actions []storage.Action // all actions of the document, as read before the run
	params  map[string]any
	// pendingArtifact is the artifact id of a pending rendition this run makes
	// again (renditions.go); "" for an action's run.
	pendingArtifact string
	// content is the document's content when the transaction that
	// started the action read it (small content; nil: read it from the
	// store).
	content []byte
	// textExact: the text j.text read from plain-text content is the
	// content's first bytes as they are (valid UTF-8).
	textExact bool
}

// paramMap returns the action's parameters, decoded once.
func (j *Job) paramMap() Params {
	if j.params == nil {
		j.params = map[string]any{}
		if len(j.Action.Parameters) > 0 {
			_ = json.Unmarshal(j.Action.Parameters, &j.params)
		}
	}
	return j.params
}

// Param returns a string parameter of the action ("" when absent). Numbers
// and booleans are given as their JSON text.
func (j *Job) Param(name string) string {
	switch v := j.paramMap()[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Open opens the document's content.
func (j *Job) Open() (io.ReadCloser, error) {
	if !j.Doc.HasContent {
		return nil, errors.New("the document has no content")
	}
	if j.content != nil {
		return io.NopCloser(bytes.NewReader(j.content)), nil
	}
	rc, _, err := j.p.db.OpenContent(j.Site, j.Doc.DocumentID)
	return rc, err
}

// TempDir makes a scratch directory for the job; remove it when done.
func (j *Job) TempDir() (string, error) {
	return os.MkdirTemp(j.p.cfg.TempDir, "quire-action-")
}

// ContentFile writes the document's content to a file named name in dir.
func (j *Job) ContentFile(dir, name string) (string, error) {
	rc, err := j.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	fn := filepath.Join(dir, name)
	f, err := os.Create(fn)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return "", err
	}
	return fn, f.Close()
}

// command builds a command of op on the job's site, by the action's user.
func (j *Job) command(op storage.Op, payload any) (*storage.Command, error) {
	return storage.NewCommand(op, j.Site, j.Action.UserID, j.p.cfg.Now(), payload)
}

// checkRights checks, as the action runs, that whoever added it may still
// do what it does (MOVE, DELETE) under the folder permissions of now; if
// not, the action fails and changes nothing.
func (j *Job) checkRights() error {
	set, err := j.p.db.FolderPermissions(j.Site)
	if err != nil {
		return engine.Retryable(err)
	}
	return storage.CheckActionRights(j.Site, j.Action, j.Doc.DocumentID, j.Doc.Path, set)
}

// Now is the pipeline's clock.
func (j *Job) Now() time.Time { return j.p.cfg.Now() }

// Outcome is what an engine reports: the status (COMPLETE when empty) and
// what the action changes, recorded together in one transaction.
type Outcome struct {
	Status      string
	Message     string
	NextAttempt *time.Time
	Metadata    map[string]string
	Texts       []storage.TextRecord
	Reindex     bool // the search index must read the new text
	Results     []storage.ActionResult
	Then        []*storage.Command
	// Uncounted: the attempt failed for a cause outside the action (a
	// full disk) and does not count against its retries.
	Uncounted bool
	// background runs once the outcome is recorded, off the worker, at
	// most ocrBackground at a time (OCR's searchable PDF); discard runs
	// instead when the outcome is not recorded.
	background func(ctx context.Context)
	discard    func()
	// rendition is recorded as pending with the outcome: what background
	// promises (renditions.go).
	rendition *storage.PendingRendition
}

// discardWork drops the outcome's background work (o may be nil).
func (o *Outcome) discardWork() {
	if o != nil && o.discard != nil {
		o.discard()
	}
}

// Engine runs one action type. An error fails the action (FAILED), or,
// when marked with engine.Retryable, schedules another attempt.
type Engine func(ctx context.Context, j *Job) (*Outcome, error)

// Engines configures the external programs and services engines use.
// Empty program names are looked up on PATH under their usual names.
type Engines struct {
	Tesseract string // tesseract
	Pdftotext string // pdftotext (poppler-utils)
	Pdftoppm  string // pdftoppm (poppler-utils)
	Ocrmypdf  string // ocrmypdf
	Soffice   string // soffice (LibreOffice)
	// Clamd is the clamd address: "unix:/run/clamav/clamd.ctl" or
	// "tcp:127.0.0.1:3310" (default: the Debian socket).
	Clamd string
	// SMTP is the default mail server for NOTIFICATION actions; a site's
	// notification configuration overrides it.
	SMTP mailer.Config
	// EventBuses maps an EVENTBRIDGE action's eventBusName to the URL its
	// CloudEvents are posted to.
	EventBuses map[string]string
	// WebhookSecret signs WEBHOOK and event bus requests (HMAC-SHA256).
	WebhookSecret string
	// LLM is the default OpenAI-compatible chat endpoint for LLM actions;
	// a site's configuration overrides it.
	LLM llmchat.Config
}

func (e *Engines) defaults() {
	if e.Clamd == "" {
		e.Clamd = "unix:/run/clamav/clamd.ctl"
	}
}
