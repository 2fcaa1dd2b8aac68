package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	qintake "quire/intake"
	"quire/server/content"
	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// Scanner intake (issue 32): intake profiles are Quire's own API, in
// FormKiQ's style, managed by site governors at
// /sites/{siteId}/intakeProfiles; devices and scripts post files to
// /sites/{siteId}/intake/{name} (multipart/form-data) with an API key.
// Every file goes through intake.Intake (the shared create path). See
// API.md "Scanner intake".

// Limits of the multipart intake route (API.md).
const (
	// maxIntakeFiles is how many files one POST may carry.
	maxIntakeFiles = 50
	// maxIntakeParts bounds every part, files and other fields.
	maxIntakeParts = 100
	// maxIntakeFieldBytes bounds a non-file field (read and ignored).
	maxIntakeFieldBytes = 64 << 10
)

// NewIntake is the server's intake: the create path of POST /documents'
// uploads (chunks tracked against the sweep, the index gate, the upload
// limits).
func (s *Handlers) NewIntake(reg prometheus.Registerer) *qintake.Intake {
	return qintake.New(qintake.Config{
		Applier: s.Deps.Applier,
		Store:   s.DB,
		Now:     s.Now,
		Limit: func(site string) (int64, error, error) {
			c, err := s.Content.UploadLimit(site, -1)
			return c.N, c.Err, err
		},
		BeforeCommit: func(ctx context.Context) error { return s.Gate.Wait(ctx) },
		Track:        s.Content.Uploads.Add,
		Untrack:      s.Content.Uploads.Done,
		Sweep:        s.Content.Sweep,
		Metrics:      reg,
	})
}

type intakeValueIn struct {
	Key         string  `json:"key"`
	Value       *string `json:"value"`
	StringValue *string `json:"stringValue"`
}

type intakeWatchIn struct {
	Enabled       *bool   `json:"enabled"`
	StableSeconds *int    `json:"stableSeconds"`
	OnSuccess     *string `json:"onSuccess"`
}

type intakeProfileIn struct {
	Name         *string               `json:"name"`
	PathTemplate *string               `json:"pathTemplate"`
	Tags         []intakeValueIn       `json:"tags"`
	Attributes   []intakeValueIn       `json:"attributes"`
	Actions      *[]documents.ActionIn `json:"actions"`
	UserID       *string               `json:"userId"`
	Groups       []string              `json:"groups"`
	Duplicates   *string               `json:"duplicates"`
	WatchFolder  *intakeWatchIn        `json:"watchFolder"`
}

// defaultIntakeTemplate is a profile's path template when none is given.
const defaultIntakeTemplate = "Inbox/{yyyy}-{mm}/{source}/{filename}"

// DefaultIntakeActions are a new profile's actions: OCR then FULLTEXT.
func DefaultIntakeActions() []storage.IntakeAction {
	return []storage.IntakeAction{{Type: "OCR"}, {Type: "FULLTEXT"}}
}

// intakeProfileFrom validates a profile from the API (name from the path
// when replacing) and builds its stored form.
func (s *Handlers) intakeProfileFrom(r *api.Request, in *intakeProfileIn, name string) (*storage.IntakeProfile, error) {
	var errs []storage.ValidationItem
	p := &storage.IntakeProfile{Name: name, PathTemplate: defaultIntakeTemplate, UserID: r.User(), Duplicates: storage.IntakeSkip,
		Actions: DefaultIntakeActions()}
	if name == "" {
		p.Name = api.Deref(in.Name)
		if in.Name == nil {
			errs = append(errs, storage.ValidationItem{Key: "name", Msg: "'name' is required"})
		}
	} else if in.Name != nil && *in.Name != name {
		errs = append(errs, storage.ValidationItem{Key: "name", Msg: "'name' cannot be changed"})
	}
	if in.PathTemplate != nil {
		p.PathTemplate = *in.PathTemplate
	}
	for _, t := range in.Tags {
		p.Tags = append(p.Tags, storage.IntakeValue{Key: t.Key, Value: api.Deref(t.Value)})
	}
	for _, a := range in.Attributes {
		v := a.StringValue
		if v == nil {
			v = a.Value
		}
		if v == nil {
			errs = append(errs, storage.ValidationItem{Key: "attributes", Msg: "attribute '" + a.Key + "' needs a 'stringValue'"})
		}
		p.Attributes = append(p.Attributes, storage.IntakeValue{Key: a.Key, Value: api.Deref(v)})
	}
	if in.Actions != nil {
		if len(*in.Actions) > storage.MaxIntakeActions {
			errs = append(errs, storage.ValidationItem{Key: "actions", Msg: fmt.Sprintf("at most %d actions", storage.MaxIntakeActions)})
		} else {
			acts, aerrs := s.Documents.ConvertActions(r, *in.Actions)
			errs = append(errs, aerrs...)
			p.Actions = nil
			for _, a := range acts {
				if storage.ActsAsAdder(a.Type) {
					errs = append(errs, storage.ValidationItem{Key: "actions", Msg: fmt.Sprintf("action '%s' is not available in an intake profile", a.Type)})
				}
				p.Actions = append(p.Actions, storage.IntakeAction{Type: a.Type, Parameters: a.Parameters, QueueID: a.QueueID})
			}
		}
	}
	if in.UserID != nil {
		p.UserID = *in.UserID
	}
	p.Groups = in.Groups
	if in.Duplicates != nil {
		p.Duplicates = strings.ToUpper(*in.Duplicates)
	}
	if w := in.WatchFolder; w != nil {
		p.Watch = &storage.IntakeWatch{Enabled: w.Enabled == nil || *w.Enabled, StableSeconds: 5, OnSuccess: storage.IntakeMove}
		if w.StableSeconds != nil {
			p.Watch.StableSeconds = *w.StableSeconds
		}
		if w.OnSuccess != nil {
			p.Watch.OnSuccess = strings.ToUpper(*w.OnSuccess)
		}
		if p.Watch.Enabled && s.Deps.IntakeFolderRoot == "" {
			errs = append(errs, storage.ValidationItem{Key: "watchFolder", Msg: "this server has no intake folder root (intake.folder_root): a watched folder cannot be enabled"})
		}
		if p.Watch.Enabled && s.Deps.IntakeFolderRoot != "" && storage.CheckIntakeName(p.Name) == "" {
			if _, err := qintake.WatchDir(s.Deps.IntakeFolderRoot, r.Site, p.Name); err != nil {
				errs = append(errs, storage.ValidationItem{Key: "watchFolder", Msg: "no watched folder for this site and profile: " + err.Error()})
			}
		}
	}
	errs = append(errs, storage.CheckIntakeProfile(p)...)
	if err := api.CheckErrors(errs); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *Handlers) intakeProfileJSON(r *api.Request, p *storage.IntakeProfile) map[string]any {
	tags := make([]map[string]any, 0, len(p.Tags))
	for _, t := range p.Tags {
		tags = append(tags, map[string]any{"key": t.Key, "value": t.Value})
	}
	attrs := make([]map[string]any, 0, len(p.Attributes))
	for _, a := range p.Attributes {
		attrs = append(attrs, map[string]any{"key": a.Key, "stringValue": a.Value})
	}
	acts := make([]map[string]any, 0, len(p.Actions))
	for _, a := range p.Actions {
		m := map[string]any{"type": a.Type}
		if len(a.Parameters) > 0 {
			m["parameters"] = a.Parameters
		}
		if a.QueueID != "" {
			m["queueId"] = a.QueueID
		}
		acts = append(acts, m)
	}
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	out := map[string]any{
		"name":             p.Name,
		"pathTemplate":     p.PathTemplate,
		"tags":             tags,
		"attributes":       attrs,
		"actions":          acts,
		"userId":           p.UserID,
		"groups":           groups,
		"duplicates":       p.Duplicates,
		"insertedDate":     api.FormatDate(p.InsertedDate),
		"lastModifiedDate": api.FormatDate(p.LastModifiedDate),
		"intakeUrl":        s.LinkBase(r.Ctx) + "/sites/" + url.PathEscape(r.Site) + "/intake/" + p.Name,
	}
	if p.ModifiedBy != "" {
		out["modifiedBy"] = p.ModifiedBy
	}
	if a := s.mailAddress(r.Site, p.Name); a != "" {
		out["mailAddress"] = a
	}
	if w := p.Watch; w != nil {
		wf := map[string]any{"enabled": w.Enabled, "stableSeconds": w.StableSeconds, "onSuccess": w.OnSuccess}
		if dir, err := qintake.WatchDir(s.Deps.IntakeFolderRoot, r.Site, p.Name); err == nil && dir != "" {
			wf["path"] = dir
		}
		out["watchFolder"] = wf
	}
	return out
}

func (s *Handlers) readIntakeProfile(r *api.Request) (*intakeProfileIn, error) {
	var b struct {
		Profile *intakeProfileIn `json:"intakeProfile"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); errors.Is(err, api.ErrNoBody) {
		return nil, api.ErrBodyRequired
	} else if err != nil {
		return nil, err
	}
	if b.Profile == nil {
		return nil, api.Invalid("intakeProfile", "'intakeProfile' is required")
	}
	return b.Profile, nil
}

// HandleAddIntakeProfile serves POST /sites/{siteId}/intakeProfiles.
func (s *Handlers) HandleAddIntakeProfile(r *api.Request) error {
	in, err := s.readIntakeProfile(r)
	if err != nil {
		return err
	}
	p, err := s.intakeProfileFrom(r, in, "")
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutIntakeProfile, storage.PutIntakeProfile{Profile: *p, Create: true, OwnGroups: true}); err != nil {
		return err
	}
	s.Watch.Poke()
	return r.Status(http.StatusCreated).JSON(map[string]any{"name": p.Name})
}

// HandleSetIntakeProfile serves PUT /sites/{siteId}/intakeProfiles/{name}:
// the profile is replaced (fields not given take their defaults).
func (s *Handlers) HandleSetIntakeProfile(r *api.Request) error {
	name := api.PathParam(r, "name")
	if _, err := s.DB.IntakeProfile(r.Site, name); err != nil {
		return err
	}
	in, err := s.readIntakeProfile(r)
	if err != nil {
		return err
	}
	p, err := s.intakeProfileFrom(r, in, name)
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutIntakeProfile, storage.PutIntakeProfile{Profile: *p, OwnGroups: true}); err != nil {
		return err
	}
	s.Watch.Poke()
	return r.JSON(map[string]any{"message": "Intake profile '" + name + "' saved"})
}

// HandleGetIntakeProfiles serves GET /sites/{siteId}/intakeProfiles.
func (s *Handlers) HandleGetIntakeProfiles(r *api.Request) error {
	list, err := s.DB.IntakeProfiles(r.Site)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for i := range list {
		out = append(out, s.intakeProfileJSON(r, &list[i]))
	}
	return r.JSON(map[string]any{"intakeProfiles": out})
}

// HandleGetIntakeProfile serves GET /sites/{siteId}/intakeProfiles/{name}.
func (s *Handlers) HandleGetIntakeProfile(r *api.Request) error {
	p, err := s.DB.IntakeProfile(r.Site, api.PathParam(r, "name"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"intakeProfile": s.intakeProfileJSON(r, p)})
}

// HandleDeleteIntakeProfile serves DELETE /sites/{siteId}/intakeProfiles/{name}.
func (s *Handlers) HandleDeleteIntakeProfile(r *api.Request) error {
	name := api.PathParam(r, "name")
	if _, err := s.Apply(r, storage.OpDeleteIntakeProfile, storage.DeleteIntakeProfile{Name: name}); err != nil {
		return err
	}
	s.Watch.Poke()
	return r.JSON(map[string]any{"message": "Intake profile '" + name + "' deleted"})
}

// HandleGetIntakeErrors serves GET
// /sites/{siteId}/intakeProfiles/{name}/errors: the profile's recent
// failed intakes, newest first.
func (s *Handlers) HandleGetIntakeErrors(r *api.Request) error {
	name := api.PathParam(r, "name")
	if _, err := s.DB.IntakeProfile(r.Site, name); err != nil {
		return err
	}
	list, err := s.DB.IntakeErrors(r.Site, name)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		m := map[string]any{"source": e.Source, "error": e.Error, "insertedDate": api.FormatDate(e.At)}
		if e.Name != "" {
			m["fileName"] = e.Name
		}
		out = append(out, m)
	}
	return r.JSON(map[string]any{"errors": out})
}

// partReader marks errors reading a part (a broken or cut body) apart
// from the store's.
type partReader struct{ r io.Reader }

type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF {
		err = &bodyReadError{err}
	}
	return n, err
}

// IntakeFailed records a failed file in its profile's error list.
func (s *Handlers) IntakeFailed(site, profile string, src qintake.Source, cause error) {
	if err := s.Intake.Fail(site, profile, src, cause); err != nil {
		s.Log.Warn("record intake error", "site", site, "profile", profile, "err", err)
	}
}

// intakeFileResult is one file of a multipart intake in the answer.
type intakeFileResult struct {
	FileName   string `json:"fileName"`
	DocumentID string `json:"documentId"`
	Path       string `json:"path,omitempty"`
	Status     string `json:"status"`
}

// HandlePostIntake serves POST /sites/{siteId}/intake/{name}: every file
// part of a multipart/form-data body becomes a document through the
// profile. All files are written first and only then committed, so a file
// over a limit (or a broken body) refuses the whole post with nothing
// created.
func (s *Handlers) HandlePostIntake(r *api.Request) error {
	p, err := s.DB.IntakeProfile(r.Site, api.PathParam(r, "name"))
	if err != nil {
		api.Drain(r.Ctx)
		return err
	}
	mt, params, err := mime.ParseMediaType(string(r.Request().Header.ContentType()))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		api.Drain(r.Ctx)
		return api.ErrStatus(http.StatusUnsupportedMediaType, "the body must be multipart/form-data with a boundary (curl -F file=@scan.pdf)")
	}
	limit, err := s.Content.UploadLimit(r.Site, -1)
	if err != nil {
		return err
	}
	if n := int64(r.Request().Header.ContentLength()); n > 0 && limit.N > 0 && n > limit.N*maxIntakeFiles+(1<<20) {
		api.Drain(r.Ctx)
		return limit.Err
	}
	var body io.Reader = api.BodyStream(r.Ctx)
	if body == nil {
		body = bytes.NewReader(r.Body())
	}
	body = &content.CompleteBody{R: body, Want: int64(r.Request().Header.ContentLength()), Conn: api.ConnOf(r.Ctx)}
	mr := multipart.NewReader(body, params["boundary"])
	var pending []*qintake.Pending
	var names []string
	abort := func(err error) error {
		for _, pd := range pending {
			pd.Abort()
		}
		if err != content.ErrIncompleteBody {
			api.Drain(r.Ctx)
		}
		return err
	}
	for parts := 0; ; parts++ {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, content.ErrIncompleteBody) {
				return abort(content.ErrIncompleteBody)
			}
			return abort(api.BadRequest("invalid multipart body: " + err.Error()))
		}
		if parts >= maxIntakeParts {
			return abort(api.BadRequest(fmt.Sprintf("a post may have at most %d parts", maxIntakeParts)))
		}
		name := part.FileName()
		if name == "" {
			// A plain field: read and ignored, bounded.
			n, err := io.Copy(io.Discard, io.LimitReader(part, maxIntakeFieldBytes+1))
			if err != nil {
				return abort(api.BadRequest("invalid multipart body: " + err.Error()))
			}
			if n > maxIntakeFieldBytes {
				return abort(api.BadRequest(fmt.Sprintf("a form field cannot exceed %d bytes", maxIntakeFieldBytes)))
			}
			continue
		}
		if len(pending) >= maxIntakeFiles {
			return abort(api.BadRequest(fmt.Sprintf("a post may carry at most %d files", maxIntakeFiles)))
		}
		if !utf8.ValidString(name) {
			return abort(api.ErrInvalidUTF8)
		}
		if errs := storage.CheckText("fileName", name, storage.MaxPathBytes); errs != nil {
			return abort(api.CheckErrors(errs))
		}
		src := qintake.Source{Kind: qintake.KindPost, Name: name, ContentType: part.Header.Get("Content-Type"),
			RequestID: api.RequestID(r.Ctx), Actor: r.User()}
		if r.Principal.APIKeyName != "" {
			src.Actor = "apiKey " + r.Principal.APIKeyName
		}
		pd, err := s.Intake.Prepare(context.Background(), r.Site, p, src, &partReader{r: part})
		if err != nil {
			var be *bodyReadError
			switch {
			case errors.Is(err, content.ErrIncompleteBody):
				return abort(content.ErrIncompleteBody)
			case errors.As(err, &be):
				return abort(api.BadRequest("invalid multipart body: " + be.err.Error()))
			}
			if qintake.Permanent(err) {
				s.IntakeFailed(r.Site, p.Name, src, err)
			}
			return abort(err) // a limit, or the store's refusal (507...)
		}
		pending = append(pending, pd)
		names = append(names, name)
	}
	if len(pending) == 0 {
		return api.Invalid("file", "no file in the post: send each file as a part with a filename (curl -F file=@scan.pdf)")
	}
	docs, skipped := []intakeFileResult{}, []intakeFileResult{}
	for i, pd := range pending {
		res, err := pd.Commit(context.Background())
		if err != nil {
			s.IntakeFailed(r.Site, p.Name, qintake.Source{Kind: qintake.KindPost, Name: names[i]}, err)
			for _, rest := range pending[i+1:] {
				rest.Abort()
			}
			// Files before it are documents already: name them, so the
			// client does not send them again.
			if i > 0 {
				s.Log.Warn("intake post failed part way", "site", r.Site, "profile", p.Name, "committed", i, "err", err)
			}
			return err
		}
		fr := intakeFileResult{FileName: names[i], DocumentID: res.DocumentID, Path: res.Path, Status: res.Outcome}
		if res.Outcome == storage.IntakeSkipped {
			skipped = append(skipped, fr)
		} else {
			docs = append(docs, fr)
		}
	}
	status := http.StatusCreated
	if len(docs) == 0 {
		status = http.StatusOK
	}
	return r.Status(status).JSON(map[string]any{"siteId": r.Site, "documents": docs, "skipped": skipped})
}
