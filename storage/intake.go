package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Scanner intake (issue 32). A site has intake profiles: where a scanned
// file goes (a path template), what it gets (tags, attributes, actions),
// who creates it (the identity), and what happens to a file whose content
// is already in the site (the duplicate policy). Every source (a watched
// folder, a multipart POST, later SMTP and WebDAV) hands its file to one
// command, OpIntakeDocument, whose applier decides the duplicate policy in
// the writing transaction (so two intakes of the same file cannot both
// miss each other) and creates the document through the same applier as
// POST /documents (applyAddDocuments) or adds a version through PATCH's
// (applyUpdateDocument).
//
// A source item may carry a key (the watched folder's journal key): the
// command is applied at most once per key and site, and the record of the
// first application answers every repeat, so a source that crashed after
// the commit and before it could move the file takes it again without a
// second document.

// Duplicate policies of a profile.
const (
	IntakeSkip     = "SKIP"      // a file whose content the site holds is not added
	IntakeKeepBoth = "KEEP_BOTH" // it becomes a document of its own
	IntakeVersion  = "VERSION"   // it becomes a new version of the document holding it
)

// IntakeDuplicatePolicies lists the duplicate policies.
var IntakeDuplicatePolicies = []string{IntakeSkip, IntakeKeepBoth, IntakeVersion}

// Outcomes of an intake.
const (
	IntakeCreated   = "CREATED"
	IntakeSkipped   = "SKIPPED"
	IntakeVersioned = "VERSIONED"
)

// After a watched folder took a file: move it to done/ or delete it.
const (
	IntakeMove   = "MOVE"
	IntakeDelete = "DELETE"
)

// Limits of a profile (documented in API.md).
const (
	MaxIntakeProfiles     = 100
	MaxIntakeTemplateLen  = 1024
	MaxIntakeTags         = 50
	MaxIntakeActions      = 20
	MaxIntakeGroups       = 50
	MaxIntakeStableSecs   = 3600
	MaxIntakeErrors       = 100 // recent errors kept per profile
	MaxIntakeSegmentBytes = 200 // an expanded placeholder, per path segment
	maxIntakeErrorBytes   = 2048
)

// IntakeValue is a tag or attribute a profile sets: Value may hold
// placeholders ({source}, {sender}, {subject}...), expanded per file.
type IntakeValue struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// IntakeAction is an action a profile queues on every new document.
type IntakeAction struct {
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters,omitempty"`
	QueueID    string          `json:"queueId,omitempty"`
}

// IntakeWatch is a profile's watched folder: <intake.folder_root>/<site>/<name>.
type IntakeWatch struct {
	Enabled bool `json:"enabled"`
	// StableSeconds: a file is taken once its size and modification time
	// have not changed for this long (a scanner writes slowly).
	StableSeconds int `json:"stableSeconds"`
	// OnSuccess: MOVE (to done/) or DELETE.
	OnSuccess string `json:"onSuccess"`
}

// IntakeProfile is one intake profile of a site.
type IntakeProfile struct {
	Name         string         `json:"name"`
	PathTemplate string         `json:"pathTemplate"`
	Tags         []IntakeValue  `json:"tags,omitempty"`
	Attributes   []IntakeValue  `json:"attributes,omitempty"`
	Actions      []IntakeAction `json:"actions"`
	// UserID and Groups are the identity documents are created as: the
	// userId of the documents and their activity, and the groups whose
	// folder permissions (WRITE) the destination must grant.
	UserID           string       `json:"userId"`
	Groups           []string     `json:"groups,omitempty"`
	Duplicates       string       `json:"duplicates"`
	Watch            *IntakeWatch `json:"watchFolder,omitempty"`
	InsertedDate     time.Time    `json:"insertedDate"`
	LastModifiedDate time.Time    `json:"lastModifiedDate"`
	ModifiedBy       string       `json:"modifiedBy,omitempty"`
}

var intakeNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// IntakePlaceholders are the names a path template and tag or attribute
// values may use.
var IntakePlaceholders = []string{"yyyy", "mm", "dd", "source", "profile", "filename", "name", "ext", "sender", "subject", "folder"}

var intakePlaceholderRE = regexp.MustCompile(`\{([^{}]*)\}`)

// CheckIntakeName reports why n cannot name a profile ("" when it can).
func CheckIntakeName(n string) string {
	if !intakeNameRE.MatchString(n) {
		return "'name' must be 1 to 64 characters a-z, 0-9, '-' or '_', starting with a letter or digit"
	}
	return ""
}

// CheckIntakeTemplate reports why tpl is no valid template ("" when it
// is). path says whether it is a path template: then {folder} must be a
// segment of its own, and no literal segment may be "." or "..".
func CheckIntakeTemplate(tpl string, path bool) string {
	if len(tpl) > MaxIntakeTemplateLen {
		return fmt.Sprintf("cannot exceed %d bytes", MaxIntakeTemplateLen)
	}
	if !utf8.ValidString(tpl) || strings.IndexFunc(tpl, isControl) >= 0 {
		return "must be valid UTF-8 without control characters"
	}
	rest := intakePlaceholderRE.ReplaceAllStringFunc(tpl, func(m string) string {
		if !slices.Contains(IntakePlaceholders, m[1:len(m)-1]) {
			return "\x00"
		}
		return ""
	})
	if strings.ContainsRune(rest, 0) {
		return "has an unknown placeholder; use " + "{" + strings.Join(IntakePlaceholders, "}, {") + "}"
	}
	if strings.ContainsAny(rest, "{}") {
		return "has an unbalanced '{' or '}'"
	}
	if !path {
		return ""
	}
	if strings.TrimSpace(tpl) == "" {
		return "is required"
	}
	if strings.Contains(tpl, "\\") {
		return "cannot contain '\\'"
	}
	for _, seg := range strings.Split(strings.Trim(tpl, "/"), "/") {
		if seg == "" {
			return "cannot contain an empty segment ('//')"
		}
		if seg == "." || seg == ".." {
			return "cannot contain '.' or '..' segments"
		}
		if strings.Contains(seg, "{folder}") && seg != "{folder}" {
			return "{folder} must be a path segment of its own"
		}
	}
	return ""
}

// IntakeVars are the values of a template's placeholders for one file.
type IntakeVars struct {
	Source, Profile, Filename, Sender, Subject string
	// Folder is the file's subfolder under the source's root ("a/b").
	Folder string
	Date   time.Time
}

func (v IntakeVars) value(name string) string {
	switch name {
	case "yyyy":
		return fmt.Sprintf("%04d", v.Date.Year())
	case "mm":
		return fmt.Sprintf("%02d", int(v.Date.Month()))
	case "dd":
		return fmt.Sprintf("%02d", v.Date.Day())
	case "source":
		return v.Source
	case "profile":
		return v.Profile
	case "filename":
		return v.Filename
	case "name":
		n := v.Filename
		if i := strings.LastIndexByte(n, '.'); i > 0 {
			n = n[:i]
		}
		return n
	case "ext":
		if i := strings.LastIndexByte(v.Filename, '.'); i > 0 {
			return v.Filename[i+1:]
		}
		return ""
	case "sender":
		return v.Sender
	case "subject":
		return v.Subject
	case "folder":
		return v.Folder
	}
	return ""
}

// ExpandIntakeValue fills a tag or attribute value template. Control
// characters and invalid UTF-8 of a value are replaced.
func ExpandIntakeValue(tpl string, v IntakeVars) string {
	out := intakePlaceholderRE.ReplaceAllStringFunc(tpl, func(m string) string {
		return cleanText(v.value(m[1 : len(m)-1]))
	})
	return truncUTF8(out, MaxValueBytes)
}

func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "_")
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func truncUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// SafeSegment makes s one safe path segment: no '/', '\\', control
// characters or characters Windows refuses, no trailing dots or blanks
// (so never '.' or '..'), at most MaxIntakeSegmentBytes. It may be empty.
func SafeSegment(s string) string {
	s = cleanText(s)
	s = strings.Map(func(r rune) rune {
		switch r {
		case '/', '\\', ':', '*', '?', '"', '<', '>', '|':
			return '_'
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	s = truncUTF8(s, MaxIntakeSegmentBytes)
	// Trailing dots and blanks go (Windows drops them), so "." and ".."
	// become empty and the segment is dropped.
	return strings.TrimRight(s, " .")
}

// ExpandIntakePath fills a path template: each placeholder's value is made
// a safe segment part ({folder} gives one safe segment per subfolder), and
// empty segments are dropped. When the template has no {folder}, the
// subfolders go before the last segment. An empty result is the file name
// (or "scan").
func ExpandIntakePath(tpl string, v IntakeVars) string {
	var folders []string
	for _, f := range strings.Split(strings.ReplaceAll(v.Folder, "\\", "/"), "/") {
		if f = SafeSegment(f); f != "" {
			folders = append(folders, f)
		}
	}
	var segs []string
	for _, seg := range strings.Split(strings.Trim(tpl, "/"), "/") {
		if seg == "{folder}" {
			segs = append(segs, folders...)
			continue
		}
		out := intakePlaceholderRE.ReplaceAllStringFunc(seg, func(m string) string {
			return SafeSegment(v.value(m[1 : len(m)-1]))
		})
		if out = SafeSegment(out); out != "" {
			segs = append(segs, out)
		}
	}
	if !strings.Contains(tpl, "{folder}") && len(folders) > 0 {
		if len(segs) == 0 {
			segs = folders
		} else {
			last := segs[len(segs)-1]
			segs = append(append(segs[:len(segs)-1:len(segs)-1], folders...), last)
		}
	}
	if len(segs) == 0 {
		name := SafeSegment(v.Filename)
		if name == "" {
			name = "scan"
		}
		segs = []string{name}
	}
	p := strings.Join(segs, "/")
	if len(p) > MaxPathBytes {
		p = truncUTF8(p, MaxPathBytes)
		p = strings.TrimRight(p, "/")
	}
	return p
}

// CheckIntakeProfile validates a profile's fields (the applier calls it;
// handlers call it early). The action types are checked by the server
// against its action registry.
func CheckIntakeProfile(p *IntakeProfile) []ValidationItem {
	var errs []ValidationItem
	add := func(k, m string) { errs = append(errs, ValidationItem{Key: k, Msg: m}) }
	if m := CheckIntakeName(p.Name); m != "" {
		add("name", m)
	}
	if m := CheckIntakeTemplate(p.PathTemplate, true); m != "" {
		add("pathTemplate", "'pathTemplate' "+m)
	}
	if len(p.Tags) > MaxIntakeTags {
		add("tags", fmt.Sprintf("at most %d tags", MaxIntakeTags))
	}
	for _, tg := range p.Tags {
		if tg.Key == "" {
			add("tags", "a tag needs a 'key'")
		}
		errs = append(errs, CheckText("tags", tg.Key, MaxKeyBytes)...)
		if m := CheckIntakeTemplate(tg.Value, false); m != "" {
			add("tags", "tag '"+tg.Key+"' value "+m)
		}
	}
	if len(p.Attributes) > MaxIntakeTags {
		add("attributes", fmt.Sprintf("at most %d attributes", MaxIntakeTags))
	}
	for _, a := range p.Attributes {
		if a.Key == "" {
			add("attributes", "an attribute needs a 'key'")
		}
		errs = append(errs, CheckText("attributes", a.Key, MaxKeyBytes)...)
		if m := CheckIntakeTemplate(a.Value, false); m != "" {
			add("attributes", "attribute '"+a.Key+"' value "+m)
		}
	}
	if len(p.Actions) > MaxIntakeActions {
		add("actions", fmt.Sprintf("at most %d actions", MaxIntakeActions))
	}
	for _, a := range p.Actions {
		if a.Type == "" {
			add("actions", "an action needs a 'type'")
		}
	}
	if p.UserID == "" {
		add("userId", "'userId' is required")
	}
	errs = append(errs, CheckText("userId", p.UserID, MaxKeyBytes)...)
	if len(p.Groups) > MaxIntakeGroups {
		add("groups", fmt.Sprintf("at most %d groups", MaxIntakeGroups))
	}
	for _, g := range p.Groups {
		if g == "" {
			add("groups", "a group name cannot be empty")
		}
		errs = append(errs, CheckText("groups", g, MaxKeyBytes)...)
	}
	if !slices.Contains(IntakeDuplicatePolicies, p.Duplicates) {
		add("duplicates", "invalid 'duplicates', use SKIP, KEEP_BOTH or VERSION")
	}
	if w := p.Watch; w != nil {
		if w.StableSeconds < 1 || w.StableSeconds > MaxIntakeStableSecs {
			add("watchFolder.stableSeconds", fmt.Sprintf("'stableSeconds' must be 1 to %d", MaxIntakeStableSecs))
		}
		if w.OnSuccess != IntakeMove && w.OnSuccess != IntakeDelete {
			add("watchFolder.onSuccess", "invalid 'onSuccess', use MOVE or DELETE")
		}
	}
	return errs
}

// PutIntakeProfile is the payload of OpPutIntakeProfile: Create refuses a
// profile that exists, otherwise the profile must exist and is replaced.
type PutIntakeProfile struct {
	Profile IntakeProfile `json:"profile"`
	Create  bool          `json:"create,omitempty"`
	// OwnGroups refuses identity groups that give rights outside the
	// profile's site (checkOwnGroups); absent in commands logged before.
	OwnGroups bool `json:"ownGroups,omitempty"`
}

// DeleteIntakeProfile is the payload of OpDeleteIntakeProfile.
type DeleteIntakeProfile struct {
	Name string `json:"name"`
}

func intakeProfileNotFound(n string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Intake profile '%s' not found", n)}
}

func applyPutIntakeProfile(t *tx, c *Command) (any, error) {
	p, err := decode[PutIntakeProfile](c)
	if err != nil {
		return nil, err
	}
	ip := p.Profile
	if err := limitsErr(CheckIntakeProfile(&ip)); err != nil {
		return nil, err
	}
	if p.OwnGroups {
		if err := checkOwnGroups(t, c.Site, "groups", ip.Groups); err != nil {
			return nil, err
		}
	}
	var old IntakeProfile
	err = t.getJSON(intakeProfileKey(c.Site, ip.Name), &old)
	switch {
	case err == nil && p.Create:
		return nil, &ConflictError{Msg: fmt.Sprintf("intake profile '%s' already exists", ip.Name)}
	case errors.Is(err, ErrNotFound) && !p.Create:
		return nil, intakeProfileNotFound(ip.Name)
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if p.Create {
		if n := t.count(intakeProfilePrefix(c.Site)); n >= MaxIntakeProfiles {
			return nil, Invalid("name", fmt.Sprintf("a site has at most %d intake profiles", MaxIntakeProfiles))
		}
		ip.InsertedDate = c.At
	} else {
		ip.InsertedDate = old.InsertedDate
	}
	ip.LastModifiedDate, ip.ModifiedBy = c.At, c.User
	if err := t.setJSON(intakeProfileKey(c.Site, ip.Name), ip); err != nil {
		return nil, err
	}
	return &ip, ensureSite(t, c)
}

func applyDeleteIntakeProfile(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteIntakeProfile](c)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(intakeProfileKey(c.Site, p.Name))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, intakeProfileNotFound(p.Name)
	}
	for _, k := range t.keys(intakeErrorPrefix(c.Site, p.Name)) {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	return nil, t.del(intakeProfileKey(c.Site, p.Name))
}

// IntakeDocument is the payload of OpIntakeDocument: one file of a source
// through a profile. Doc is built from the profile by the intake package
// (path expanded, content written); the applier re-reads the profile for
// its duplicate policy, so a profile changed meanwhile decides.
type IntakeDocument struct {
	Profile string `json:"profile"`
	// Key, when set, makes the intake apply at most once (the journal).
	Key    string       `json:"key,omitempty"`
	Source string       `json:"source"`
	Name   string       `json:"name,omitempty"` // the file name, for the journal
	Doc    NewDocument  `json:"doc"`
	Writer *ActionActor `json:"writer,omitempty"`
}

// IntakeRecord is the journal entry of a keyed intake (ij/), and the
// result of OpIntakeDocument.
type IntakeRecord struct {
	Key        string    `json:"key,omitempty"`
	Profile    string    `json:"profile"`
	Source     string    `json:"source"`
	Name       string    `json:"name,omitempty"`
	Outcome    string    `json:"outcome"`
	DocumentID string    `json:"documentId"`
	Path       string    `json:"path,omitempty"`
	At         time.Time `json:"at"`
	// Repeat: the key had been taken; this is the first intake's record.
	Repeat bool `json:"repeat,omitempty"`
}

// IntakeKeyHash is how a journal key is stored.
func IntakeKeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

func applyIntakeDocument(t *tx, c *Command) (any, error) {
	p, err := decode[IntakeDocument](c)
	if err != nil {
		return nil, err
	}
	var prof IntakeProfile
	if err := t.getJSON(intakeProfileKey(c.Site, p.Profile), &prof); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, intakeProfileNotFound(p.Profile)
		}
		return nil, err
	}
	if p.Key != "" {
		var rec IntakeRecord
		err := t.getJSON(intakeJournalKey(c.Site, IntakeKeyHash(p.Key)), &rec)
		if err == nil {
			rec.Repeat = true
			return &rec, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	if p.Doc.Content == nil || p.Doc.Content.SHA256 == "" {
		return nil, Invalid("content", "intake needs content")
	}
	sha := p.Doc.Content.SHA256
	rec := &IntakeRecord{Key: p.Key, Profile: p.Profile, Source: p.Source, Name: p.Name, At: c.At}
	existing := ""
	if b, err := t.getRaw(intakeSumKey(c.Site, sha)); err == nil {
		if d, err := getLiveDoc(t, c.Site, string(b)); err == nil && d.ContentSHA256 == sha {
			existing = d.DocumentID
		}
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	switch {
	case existing != "" && prof.Duplicates == IntakeSkip:
		rec.Outcome, rec.DocumentID = IntakeSkipped, existing
	case existing != "" && prof.Duplicates == IntakeVersion:
		nd := p.Doc
		path := nd.Document.Path
		up := UpdateDocument{DocumentID: existing, Path: &path, Tags: nd.Tags, Attributes: nd.Attributes,
			Actions: nd.Actions, Content: nd.Content, Chunks: nd.Chunks, Writer: p.Writer}
		sub := &Command{Op: OpUpdateDocument, Site: c.Site, User: c.User, At: c.At, Rules: c.Rules, Via: c.Via, local: up}
		v, err := applyUpdateDocument(t, sub)
		if err != nil {
			return nil, err
		}
		rec.Outcome, rec.DocumentID = IntakeVersioned, existing
		if r, ok := v.(*AddDocumentsResult); ok {
			rec.Path = r.Paths[existing]
		}
	default:
		add := AddDocuments{Docs: []NewDocument{p.Doc}, Writer: p.Writer}
		sub := &Command{Op: OpAddDocuments, Site: c.Site, User: c.User, At: c.At, Rules: c.Rules, Via: c.Via, local: add}
		v, err := applyAddDocuments(t, sub)
		if err != nil {
			return nil, err
		}
		id := p.Doc.Document.DocumentID
		rec.Outcome, rec.DocumentID = IntakeCreated, id
		if r, ok := v.(*AddDocumentsResult); ok {
			rec.Path = r.Paths[id]
		}
		if err := t.set(intakeSumKey(c.Site, sha), []byte(id)); err != nil {
			return nil, err
		}
	}
	if p.Key != "" {
		if err := t.setJSON(intakeJournalKey(c.Site, IntakeKeyHash(p.Key)), rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// IntakeError is one failed intake, kept for the API (the newest
// MaxIntakeErrors per profile).
type IntakeError struct {
	Profile string    `json:"profile"`
	Source  string    `json:"source"`
	Name    string    `json:"name,omitempty"`
	Error   string    `json:"error"`
	At      time.Time `json:"at"`
}

// AddIntakeError is the payload of OpAddIntakeError.
type AddIntakeError struct {
	Error IntakeError `json:"error"`
}

func applyAddIntakeError(t *tx, c *Command) (any, error) {
	p, err := decode[AddIntakeError](c)
	if err != nil {
		return nil, err
	}
	e := p.Error
	if ok, err := t.exists(intakeProfileKey(c.Site, e.Profile)); err != nil || !ok {
		if err == nil {
			err = intakeProfileNotFound(e.Profile)
		}
		return nil, err
	}
	e.At = c.At
	e.Name = truncUTF8(cleanText(e.Name), MaxPathBytes)
	e.Source = truncUTF8(cleanText(e.Source), MaxKeyBytes)
	e.Error = truncUTF8(strings.ToValidUTF8(e.Error, "?"), maxIntakeErrorBytes)
	h := sha256.Sum256([]byte(e.Source + "\x00" + e.Name + "\x00" + e.Error))
	if err := t.setJSON(intakeErrorKey(c.Site, e.Profile, c.At, hex.EncodeToString(h[:4])), e); err != nil {
		return nil, err
	}
	keys := t.keys(intakeErrorPrefix(c.Site, e.Profile))
	for i := 0; i < len(keys)-MaxIntakeErrors; i++ {
		if err := t.del(keys[i]); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// IntakeProfiles lists a site's profiles by name.
func (d *DB) IntakeProfiles(site string) ([]IntakeProfile, error) {
	var out []IntakeProfile
	err := d.view(func(t *tx) error {
		return t.each(intakeProfilePrefix(site), func(_, v []byte) error {
			var p IntakeProfile
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
	})
	return out, err
}

// WatchedIntakeProfiles lists every site's profiles with a watched folder.
func (d *DB) WatchedIntakeProfiles() (map[string][]IntakeProfile, error) {
	out := map[string][]IntakeProfile{}
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxIntakeProfile), func(k, v []byte) error {
			var p IntakeProfile
			if err := json.Unmarshal(v, &p); err != nil {
				return err
			}
			if p.Watch == nil || !p.Watch.Enabled {
				return nil
			}
			rest := string(k[len(pfxIntakeProfile):])
			i := strings.LastIndexByte(rest, '/')
			if i < 0 {
				return nil
			}
			site := siteOfKey(rest[:i])
			out[site] = append(out[site], p)
			return nil
		})
	})
	return out, err
}

// IntakeProfile returns one profile.
func (d *DB) IntakeProfile(site, name string) (*IntakeProfile, error) {
	var p IntakeProfile
	err := d.view(func(t *tx) error { return t.getJSON(intakeProfileKey(site, name), &p) })
	if errors.Is(err, ErrNotFound) {
		return nil, intakeProfileNotFound(name)
	}
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// IntakeErrors lists a profile's recent errors, newest first.
func (d *DB) IntakeErrors(site, profile string) ([]IntakeError, error) {
	var out []IntakeError
	err := d.view(func(t *tx) error {
		return t.each(intakeErrorPrefix(site, profile), func(_, v []byte) error {
			var e IntakeError
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			out = append(out, e)
			return nil
		})
	})
	slices.Reverse(out)
	return out, err
}

// IntakeJournal returns the journal record of a keyed intake, nil when the
// key was not taken.
func (d *DB) IntakeJournal(site, key string) (*IntakeRecord, error) {
	var r IntakeRecord
	err := d.view(func(t *tx) error { return t.getJSON(intakeJournalKey(site, IntakeKeyHash(key)), &r) })
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// MaxIntakePrune is the most journal entries one OpPruneIntakeJournal
// drops.
const MaxIntakePrune = 1000

// IntakeJournalRef names one journal entry: its site, key hash and the
// time its intake was applied (At: an entry written again since is not
// the one that was found finished, and stays).
type IntakeJournalRef struct {
	Site    string    `json:"site"`
	KeyHash string    `json:"keyHash"`
	At      time.Time `json:"at"`
}

// PruneIntakeJournal is the payload of OpPruneIntakeJournal.
type PruneIntakeJournal struct {
	Entries []IntakeJournalRef `json:"entries"`
}

func applyPruneIntakeJournal(t *tx, c *Command) (any, error) {
	p, err := decode[PruneIntakeJournal](c)
	if err != nil {
		return nil, err
	}
	if len(p.Entries) > MaxIntakePrune {
		return nil, Invalid("entries", fmt.Sprintf("at most %d entries", MaxIntakePrune))
	}
	n := 0
	for _, e := range p.Entries {
		if !CheckSiteID(e.Site) || len(e.KeyHash) != 64 || strings.Trim(e.KeyHash, "0123456789abcdef") != "" {
			return nil, Invalid("entries", "a journal entry is named by a site and a SHA-256 key hash")
		}
		k := intakeJournalKey(e.Site, e.KeyHash)
		var rec IntakeRecord
		if err := t.getJSON(k, &rec); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if !rec.At.Equal(e.At) {
			continue
		}
		if err := t.del(k); err != nil {
			return nil, err
		}
		n++
	}
	return n, nil
}

// errStopJournal ends EachIntakeJournal's walk early.
var errStopJournal = errors.New("stop")

// EachIntakeJournal calls fn with every journal entry (its site, key hash
// and record) in key order until fn returns false.
func (d *DB) EachIntakeJournal(fn func(site, keyHash string, rec IntakeRecord) bool) error {
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxIntakeJournal), func(k, v []byte) error {
			rest := string(k[len(pfxIntakeJournal):])
			i := strings.LastIndexByte(rest, '/')
			if i < 0 {
				return nil
			}
			var rec IntakeRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return err
			}
			if !fn(siteOfKey(rest[:i]), rest[i+1:], rec) {
				return errStopJournal
			}
			return nil
		})
	})
	if errors.Is(err, errStopJournal) {
		return nil
	}
	return err
}
