// Package intake takes scanned files into Quire through intake profiles
// (issue 32): every source (a watched folder, a multipart POST, SMTP,
// WebDAV) hands each file to Intake.Take, which streams it into content
// chunks, builds the document from the profile and applies one
// storage.OpIntakeDocument command. That command's applier decides the
// profile's duplicate policy in the writing transaction and creates the
// document with the same applier as POST /documents (or adds a version),
// so an intake is as durable as an API create: when Take returns without
// error the document and its content are on disk (Badger's SyncWrites).
package intake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/h2non/filetype"
	"github.com/prometheus/client_golang/prometheus"

	"quire/storage"
)

// Source kinds, the {source} placeholder and the metrics' source label.
const (
	KindFolder = "FOLDER"
	KindPost   = "POST"
	KindSMTP   = "SMTP"
	KindWebDAV = "WEBDAV"
)

// Source describes one file as a source received it.
type Source struct {
	// Kind is one of the Kind constants.
	Kind string
	// Name is the file's name as the source knows it (a base name: a
	// folder is given in Folder).
	Name string
	// Folder is the file's subfolder under the source's root ("a/b"); its
	// parts become path segments.
	Folder string
	// Sender and Subject are the {sender} and {subject} placeholders
	// (a mail's From and Subject; empty for a folder).
	Sender, Subject string
	// Date is the {yyyy}, {mm}, {dd} placeholders' time (zero: now).
	Date time.Time
	// ContentType is what the source says the file is (empty or generic:
	// detected from its first bytes, then its extension).
	ContentType string
	// Key, when set, makes the intake happen at most once per site and
	// key (the journal): a repeat answers the first intake's result with
	// Repeat set. The watched folder's key names the file and its
	// size and modification time.
	Key string
	// Actor is who handed the file over, for the activity trail (an API
	// key's name, a mail user); RequestID the request it came in.
	Actor, RequestID string
	// Tags are set on the document besides the profile's (a mail's
	// sender, subject and date: tags need no attribute definition).
	Tags []storage.Tag
}

// Result is what an intake did.
type Result struct {
	storage.IntakeRecord
	Size int64 `json:"size"`
}

// Config is what an Intake needs from the server.
type Config struct {
	// Applier applies commands (the store, or a cluster node).
	Applier storage.Applier
	// Store reads profiles and journals.
	Store *storage.DB
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Limit is the most bytes one file may have in site (0: no limit) and
	// the error for a larger one (default: no limit).
	Limit func(site string) (int64, error, error)
	// BeforeCommit runs before the command is applied, once the content
	// is written (the server's fulltext index gate).
	BeforeCommit func(ctx context.Context) error
	// Track and Untrack protect chunks of an intake in progress from the
	// sweep of another failed upload; Sweep removes a failed intake's
	// chunks that nothing references.
	Track   func(sha string)
	Untrack func(shas []string)
	Sweep   func(shas []string)
	// Metrics, when set, receives quire_intake_* (nil: not registered).
	Metrics prometheus.Registerer
}

// Intake is the shared create path of every intake source.
type Intake struct {
	cfg   Config
	files *prometheus.CounterVec
	bytes *prometheus.CounterVec
}

// New returns an Intake.
func New(cfg Config) *Intake {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	in := &Intake{cfg: cfg,
		files: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quire_intake_files_total",
			Help: "Files taken by intake sources, by source (FOLDER, POST, SMTP, WEBDAV), profile and outcome (created, skipped, versioned, repeated, failed).",
		}, []string{"source", "profile", "outcome"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quire_intake_bytes_total",
			Help: "Content bytes taken by intake sources (files that became or versioned a document).",
		}, []string{"source", "profile", "outcome"}),
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(in.files, in.bytes)
	}
	return in
}

// Count records an outcome in quire_intake_files_total (sources call it
// for failures that never reached Take, such as a refused upload).
func (in *Intake) Count(kind, profile, outcome string) {
	in.files.WithLabelValues(kind, profile, outcome).Inc()
}

// Profile returns a site's profile.
func (in *Intake) Profile(site, name string) (*storage.IntakeProfile, error) {
	return in.cfg.Store.IntakeProfile(site, name)
}

// TooLargeError is a file over the site's or the server's upload limit.
// Err, when set, is how the server answers it (Error says the limit).
type TooLargeError struct {
	Limit int64
	Err   error
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is larger than the limit of %d bytes", e.Limit)
}

func (e *TooLargeError) Unwrap() error { return e.Err }

// ErrEmpty refuses an empty file (a scanner's aborted job).
var ErrEmpty = storage.Invalid("file", "the file is empty")

// Take streams r into a new document of site through profile p (or,
// under its duplicate policy, skips it or adds a version). The content
// is read once, in chunks, and never held whole in memory. When Take
// returns nil the document is on disk. A failure is returned, counted
// and not recorded: sources call Fail for the profile's error list when
// the failure is the file's, not the caller's.
func (in *Intake) Take(ctx context.Context, site string, p *storage.IntakeProfile, src Source, r io.Reader) (Result, error) {
	pend, err := in.Prepare(ctx, site, p, src, r)
	if err != nil {
		in.files.WithLabelValues(src.Kind, p.Name, "failed").Inc()
		return Result{}, err
	}
	return pend.Commit(ctx)
}

// Pending is a file whose content is written and whose document is not
// made yet: Commit makes it, Abort drops the content. A source that takes
// several files at once (a multipart POST, a mail's attachments) prepares
// them all first, so a file over a limit refuses them all before any
// document exists.
type Pending struct {
	in   *Intake
	site string
	p    *storage.IntakeProfile
	src  Source
	shas []string
	cmd  *storage.Command
	nd   storage.NewDocument
	size int64
	sha  string
	rec  *storage.IntakeRecord // a repeat found in the journal
	done bool
}

// Prepare streams r into content chunks and builds the document of one
// file (see Take). The caller must Commit or Abort the result.
func (in *Intake) Prepare(ctx context.Context, site string, p *storage.IntakeProfile, src Source, r io.Reader) (*Pending, error) {
	now := in.cfg.Now().UTC()
	if src.Date.IsZero() {
		src.Date = now
	}
	pend := &Pending{in: in, site: site, p: p, src: src}
	if src.Key != "" {
		// Taken before (a crash between the commit and the source's
		// cleanup): answer the journal, write nothing.
		rec, err := in.cfg.Store.IntakeJournal(site, src.Key)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			rec.Repeat = true
			pend.rec = rec
			return pend, nil
		}
	}
	limit, tooLarge := int64(0), error(nil)
	if in.cfg.Limit != nil {
		var err error
		if limit, tooLarge, err = in.cfg.Limit(site); err != nil {
			return nil, err
		}
	}
	head := &headReader{r: r}
	m, tail, err := storage.WriteContent(ctx, in.cfg.Applier, head, limit, func(sha string) {
		if in.cfg.Track != nil {
			in.cfg.Track(sha)
		}
		pend.shas = append(pend.shas, sha)
	})
	if errors.Is(err, storage.ErrTooLarge) {
		err = &TooLargeError{Limit: limit, Err: tooLarge}
	}
	if err == nil && m.Size == 0 {
		err = ErrEmpty
	}
	if err != nil {
		pend.Abort()
		return nil, err
	}
	nd := buildDocument(p, src, m, tail, head.buf, src.Date)
	payload := storage.IntakeDocument{Profile: p.Name, Key: src.Key, Source: src.Kind, Name: src.Name, Doc: nd,
		Writer: &storage.ActionActor{Groups: p.Groups, Permissions: []string{storage.FolderWrite}}}
	cmd, err := storage.NewCommand(storage.OpIntakeDocument, site, p.UserID, now, payload)
	if err != nil {
		pend.Abort()
		return nil, err
	}
	cmd.Via = &storage.Via{RequestID: src.RequestID, Source: storage.SourceIntake, Actor: src.Kind + "/" + p.Name}
	if src.Actor != "" {
		cmd.Via.Actor += " " + src.Actor
	}
	// As an upload's commit: a key of its own, so a cluster member whose
	// forward broke sends it again instead of answering an unknown outcome.
	cmd.Idem = &storage.Idempotency{Key: "intake " + uuid.NewString(), Hash: "intake"}
	pend.cmd, pend.nd, pend.size, pend.sha = cmd, nd, m.Size, m.SHA256
	return pend, nil
}

// Size is the file's length in bytes.
func (pd *Pending) Size() int64 { return pd.size }

// Abort drops a prepared file's content (chunks nothing else references).
func (pd *Pending) Abort() {
	if pd.done {
		return
	}
	pd.done = true
	in := pd.in
	if in.cfg.Sweep != nil && len(pd.shas) > 0 {
		in.cfg.Sweep(pd.shas)
	}
	if in.cfg.Untrack != nil {
		in.cfg.Untrack(pd.shas)
	}
	in.files.WithLabelValues(pd.src.Kind, pd.p.Name, "failed").Inc()
}

// Commit applies the intake: when it returns nil the document (or the
// version, or the decision to skip) is on disk.
func (pd *Pending) Commit(ctx context.Context) (Result, error) {
	if pd.done {
		return Result{}, errors.New("intake: committed or aborted already")
	}
	in := pd.in
	if pd.rec != nil {
		pd.done = true
		in.files.WithLabelValues(pd.src.Kind, pd.p.Name, "repeated").Inc()
		return Result{IntakeRecord: *pd.rec}, nil
	}
	if in.cfg.BeforeCommit != nil {
		if err := in.cfg.BeforeCommit(ctx); err != nil {
			pd.Abort()
			return Result{}, err
		}
	}
	out, err := in.cfg.Applier.Apply(context.WithoutCancel(ctx), pd.cmd)
	if err != nil {
		pd.Abort()
		return Result{}, err
	}
	rec, ok := out.Value.(*storage.IntakeRecord)
	if !ok || rec == nil {
		pd.Abort()
		return Result{}, fmt.Errorf("intake: unexpected result %T", out.Value)
	}
	pd.done = true
	if rec.Outcome == storage.IntakeSkipped && in.cfg.Sweep != nil {
		in.cfg.Sweep(pd.shas) // only what nothing references: the duplicate's chunks stay
	}
	if in.cfg.Untrack != nil {
		in.cfg.Untrack(pd.shas)
	}
	outcome := strings.ToLower(rec.Outcome)
	if rec.Repeat {
		outcome = "repeated"
	}
	in.files.WithLabelValues(pd.src.Kind, pd.p.Name, outcome).Inc()
	if rec.Outcome != storage.IntakeSkipped && !rec.Repeat {
		in.bytes.WithLabelValues(pd.src.Kind, pd.p.Name, outcome).Add(float64(pd.size))
	}
	return Result{IntakeRecord: *rec, Size: pd.size}, nil
}

// Fail records a failed intake in the profile's recent errors (GET
// /sites/{siteId}/intakeProfiles/{name}/errors). It never fails itself:
// a failure to record is returned for the caller's log.
func (in *Intake) Fail(site, profile string, src Source, cause error) error {
	e := storage.IntakeError{Profile: profile, Source: src.Kind, Name: path.Join(src.Folder, src.Name), Error: cause.Error()}
	cmd, err := storage.NewCommand(storage.OpAddIntakeError, site, "", in.cfg.Now().UTC(), storage.AddIntakeError{Error: e})
	if err != nil {
		return err
	}
	_, err = in.cfg.Applier.Apply(context.Background(), cmd)
	return err
}

// Build is the new document of one file under p for a source that writes
// its content and names its path itself (WebDAV: the client's path;
// docPath "" takes the profile's template): the profile's tags,
// attributes and actions, the content type from the source, the first
// bytes (head) or the extension. The caller applies it through the same
// commands as POST /documents and reports the outcome with Counted.
func (in *Intake) Build(p *storage.IntakeProfile, src Source, docPath string, m storage.Manifest, tail []storage.Chunk, head []byte) storage.NewDocument {
	if src.Date.IsZero() {
		src.Date = in.cfg.Now().UTC()
	}
	nd := buildDocument(p, src, m, tail, head, src.Date)
	if docPath != "" {
		nd.Document.Path = docPath
	}
	return nd
}

// Counted records the outcome of a file a source committed itself (see
// Build) in quire_intake_files_total, and its size in
// quire_intake_bytes_total unless it failed.
func (in *Intake) Counted(kind, profile, outcome string, size int64) {
	in.files.WithLabelValues(kind, profile, outcome).Inc()
	if outcome != "failed" && size > 0 {
		in.bytes.WithLabelValues(kind, profile, outcome).Add(float64(size))
	}
}

// buildDocument is the new document of one file under p.
func buildDocument(p *storage.IntakeProfile, src Source, m storage.Manifest, tail []storage.Chunk, head []byte, date time.Time) storage.NewDocument {
	vars := storage.IntakeVars{Source: strings.ToLower(src.Kind), Profile: p.Name, Filename: src.Name,
		Sender: src.Sender, Subject: src.Subject, Folder: src.Folder, Date: date.UTC()}
	var nd storage.NewDocument
	d := &nd.Document
	d.DocumentID = uuid.NewString()
	d.ResourceType = storage.ResourceDocument
	d.Path = storage.ExpandIntakePath(p.PathTemplate, vars)
	d.UserID = p.UserID
	d.ChecksumType, d.Checksum = "SHA256", m.SHA256
	d.ContentType = contentType(src, head)
	nd.Content, nd.Chunks = &m, tail
	for _, tg := range p.Tags {
		nd.Tags = append(nd.Tags, storage.Tag{Key: tg.Key, Value: storage.ExpandIntakeValue(tg.Value, vars)})
	}
	for _, tg := range src.Tags {
		nd.Tags = append(nd.Tags, storage.Tag{Key: tg.Key, Value: tg.Value})
	}
	for _, a := range p.Attributes {
		v := storage.ExpandIntakeValue(a.Value, vars)
		nd.Attributes = append(nd.Attributes, storage.AttributeInput{Key: a.Key, StringValue: &v})
	}
	for _, a := range p.Actions {
		nd.Actions = append(nd.Actions, storage.Action{Type: a.Type, Status: storage.ActionPending, Parameters: a.Parameters, QueueID: a.QueueID})
	}
	return nd
}

// contentType is the source's type when it says something, else the
// sniffed type, else the extension's ("" when none of them knows).
func contentType(src Source, head []byte) string {
	if t := strings.TrimSpace(strings.SplitN(src.ContentType, ";", 2)[0]); t != "" && !generic(t) {
		return strings.ToLower(t)
	}
	if kind, err := filetype.Match(head); err == nil && kind != filetype.Unknown && kind.MIME.Value != "" {
		return kind.MIME.Value
	}
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(src.Name))); t != "" {
		return strings.TrimSpace(strings.SplitN(t, ";", 2)[0])
	}
	return "application/octet-stream"
}

func generic(t string) bool {
	t = strings.ToLower(t)
	return t == "application/octet-stream" || t == "binary/octet-stream" || t == "application/x-www-form-urlencoded"
}

// headReader keeps the first bytes read, for the content type.
type headReader struct {
	r   io.Reader
	buf []byte
}

// HeadReader is a reader that keeps the first bytes read through it, for
// Build's content type (Head).
type HeadReader struct{ h headReader }

// NewHeadReader reads r.
func NewHeadReader(r io.Reader) *HeadReader { return &HeadReader{h: headReader{r: r}} }

func (h *HeadReader) Read(p []byte) (int, error) { return h.h.Read(p) }

// Head is the first bytes read (at most 8 KiB).
func (h *HeadReader) Head() []byte { return h.h.buf }

const headBytes = 8192

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if room := headBytes - len(h.buf); room > 0 && n > 0 {
		h.buf = append(h.buf, p[:min(n, room)]...)
	}
	return n, err
}
