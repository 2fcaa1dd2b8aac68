package storage

// Retention and disposition policies (SERVICE-SPEC.md §2.10, §6), modelled
// as FormKiQ does: a document carries the reserved ENTITY attribute
// RetentionPolicy (and optionally DispositionPolicy) naming an entity of
// the preset entity type of that name; the policy's own attributes say how
// long and how strictly. When the attribute is set, the applier computes
// the reserved attributes RetentionEffectiveStartDate,
// RetentionEffectiveEndDate, RetentionEffectiveStatus (and DispositionDate)
// on the document and keeps a retention record rt/<site>/<doc> that the
// mutation check reads (see DESIGN.md "Retention and the scheduler").

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Retention modes (the RetentionMode attribute of a RetentionPolicy entity).
const (
	RetentionOnly       = "RETENTION_ONLY"
	RetentionGovernance = "GOVERNANCE"
)

// Attribute keys of retention and disposition policies and of the
// document attributes computed from them (API-NAMES Appendix D).
const (
	KeyRetentionMode                = "RetentionMode"
	KeyRetentionPeriodInDays        = "RetentionPeriodInDays"
	KeyRetentionStartDateSourceType = "RetentionStartDateSourceType"
	KeyRetentionEffectiveStartDate  = "RetentionEffectiveStartDate"
	KeyRetentionEffectiveEndDate    = "RetentionEffectiveEndDate"
	KeyRetentionEffectiveStatus     = "RetentionEffectiveStatus"
	KeyDispositionPeriodInDays      = "DispositionPeriodInDays"
	KeyDispositionDate              = "DispositionDate"
	// KeyDispositionAction is Quire's attribute of a DispositionPolicy
	// entity: SOFT_DELETE or DELETE (FormKiQ's DocumentConfigDispositionAction).
	KeyDispositionAction = "DispositionAction"
)

// Retention start date sources, statuses and disposition actions.
const (
	RetentionStartInserted    = "DATE_INSERTED"     // the document's insertedDate (default)
	RetentionStartPolicyAdded = "DATE_POLICY_ADDED" // when the RetentionPolicy attribute was set
	RetentionStatusActive     = "ACTIVE"            // before the end date
	RetentionStatusExpired    = "EXPIRED"           // the nightly run saw the end date pass
	DispositionSoftDelete     = "SOFT_DELETE"
	DispositionDelete         = "DELETE"
)

// retentionComputed are the document attributes the store computes; a
// client cannot write them.
var retentionComputed = []string{KeyRetentionEffectiveStartDate, KeyRetentionEffectiveEndDate, KeyRetentionEffectiveStatus, KeyDispositionDate}

func isRetentionComputed(key string) bool { return slices.Contains(retentionComputed, key) }

// DocRetention is a document's retention as computed when its policy was
// attached.
type DocRetention struct {
	DocumentID          string     `json:"documentId"`
	PolicyID            string     `json:"policyId"`
	Mode                string     `json:"mode"`
	Start               time.Time  `json:"start"`
	End                 time.Time  `json:"end"`
	Status              string     `json:"status"`
	DispositionPolicyID string     `json:"dispositionPolicyId,omitempty"`
	DispositionAction   string     `json:"dispositionAction,omitempty"`
	DispositionDate     *time.Time `json:"dispositionDate,omitempty"`
}

// due is when the nightly run next looks at the document: its end date
// while ACTIVE, then its disposition date.
func (r *DocRetention) due() (time.Time, bool) {
	if r.Status == RetentionStatusActive {
		return r.End, true
	}
	if r.DispositionDate != nil {
		return *r.DispositionDate, true
	}
	return time.Time{}, false
}

// GovernedError refuses a change to a document under GOVERNANCE
// retention. The server answers 409 {"message": Msg}: the request
// conflicts with the document's state, and the same request succeeds
// after the retention end.
type GovernedError struct{ Msg string }

func (e *GovernedError) Error() string { return e.Msg }

// ErrGoverned matches GovernedError with errors.Is.
var ErrGoverned = errors.New("document under governance retention")

func (e *GovernedError) Unwrap() error { return ErrGoverned }

// checkMutable refuses c's change of d while a GOVERNANCE retention holds
// it (before its end), while it is under legal hold, or while another
// user has it checked out (locks.go). Every applier that changes a
// document's content, moves or removes it calls it inside its
// transaction, so no route, action or administrator gets past it.
func checkMutable(t *tx, c *Command, d *Document) error {
	var r DocRetention
	err := t.getJSON(retentionKey(c.Site, d.DocumentID), &r)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && r.Mode == RetentionGovernance && c.At.Before(r.End) {
		return &GovernedError{Msg: fmt.Sprintf("document '%s' is under GOVERNANCE retention until %s", d.DocumentID, r.End.UTC().Format(DateLayout))}
	}
	return checkLock(t, c.Site, c.User, d)
}

// entityAttr is one attribute of an entity, nil when absent.
func entityAttr(e *Entity, key string) *EntityAttribute {
	for i := range e.Attributes {
		if e.Attributes[i].Key == key {
			return &e.Attributes[i]
		}
	}
	return nil
}

func entityString(e *Entity, key string) string {
	if a := entityAttr(e, key); a != nil && len(a.Strings) > 0 {
		return a.Strings[0]
	}
	return ""
}

func entityNumber(e *Entity, key string) (float64, bool) {
	if a := entityAttr(e, key); a != nil && len(a.Numbers) > 0 {
		return a.Numbers[0], true
	}
	return 0, false
}

func dateAttr(s *docAttrSet, key string, v time.Time) {
	s.cur[key] = &DocAttribute{Key: key, ValueType: DataDate, Strings: []string{v.UTC().Format(DateLayout)}, InsertedDate: s.c.At, UserID: s.c.User}
}

// syncRetention runs in docAttrSet.save: it refuses a change that would
// remove or change the policies of a governed document, and computes the
// retention record and the reserved attributes from the RetentionPolicy
// and DispositionPolicy attributes.
func (s *docAttrSet) syncRetention() error {
	var old DocRetention
	err := s.t.getJSON(retentionKey(s.c.Site, s.doc), &old)
	had := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if s.purging {
		if had {
			return s.dropRetention(&old)
		}
		return nil
	}
	if had && old.Mode == RetentionGovernance && s.c.At.Before(old.End) {
		for _, k := range append([]string{KeyRetentionPolicy, KeyDispositionPolicy}, retentionComputed...) {
			o, n := s.old[k], s.cur[k]
			if (o == nil) != (n == nil) || (o != nil && !sameAttrValue(o, n)) {
				return &GovernedError{Msg: fmt.Sprintf("document '%s' is under GOVERNANCE retention until %s: '%s' cannot change", s.doc, old.End.UTC().Format(DateLayout), k)}
			}
		}
		return nil
	}
	pol := s.cur[KeyRetentionPolicy]
	if o := s.old[KeyRetentionPolicy]; had && pol != nil && o != nil && sameAttrValue(o, pol) && sameAttrValue(s.old[KeyDispositionPolicy], s.cur[KeyDispositionPolicy]) {
		// Unchanged policies: keep what was computed.
		for _, k := range retentionComputed {
			if a, ok := s.old[k]; ok {
				s.cur[k] = a
			} else {
				delete(s.cur, k)
			}
		}
		return nil
	}
	for _, k := range retentionComputed {
		delete(s.cur, k)
	}
	if had {
		if err := s.dropRetention(&old); err != nil {
			return err
		}
	}
	if pol == nil || len(pol.Entities) == 0 {
		return nil
	}
	r, msg, err := s.computeRetention(pol.Entities[0], s.cur[KeyDispositionPolicy])
	if err != nil {
		return err
	}
	if msg != "" {
		return Invalid(KeyRetentionPolicy, msg)
	}
	if r == nil {
		return nil
	}
	dateAttr(s, KeyRetentionEffectiveStartDate, r.Start)
	dateAttr(s, KeyRetentionEffectiveEndDate, r.End)
	s.cur[KeyRetentionEffectiveStatus] = &DocAttribute{Key: KeyRetentionEffectiveStatus, ValueType: DataString, Strings: []string{r.Status}, InsertedDate: s.c.At, UserID: s.c.User}
	if r.DispositionDate != nil {
		dateAttr(s, KeyDispositionDate, *r.DispositionDate)
	}
	return putRetention(s.t, s.c.Site, r)
}

func sameAttrValue(a, b *DocAttribute) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.InsertedDate, y.InsertedDate, x.UserID, y.UserID = time.Time{}, time.Time{}, "", ""
	return sameAttr(&x, &y)
}

func (s *docAttrSet) computeRetention(ref EntityRef, disp *DocAttribute) (*DocRetention, string, error) {
	var pe Entity
	err := s.t.getJSON(entityKey(s.c.Site, ref.EntityTypeID, ref.EntityID), &pe)
	if errors.Is(err, ErrNotFound) {
		return nil, entityNotFound(ref.EntityID).Error(), nil
	}
	if err != nil {
		return nil, "", err
	}
	if ref.EntityTypeID != KeyRetentionPolicy {
		return nil, "'RetentionPolicy' must name a RetentionPolicy entity", nil
	}
	mode := entityString(&pe, KeyRetentionMode)
	if mode == "" {
		mode = RetentionOnly
	}
	if mode != RetentionOnly && mode != RetentionGovernance {
		return nil, fmt.Sprintf("invalid '%s' of RetentionPolicy '%s': use RETENTION_ONLY or GOVERNANCE", KeyRetentionMode, pe.EntityID), nil
	}
	days, ok := entityNumber(&pe, KeyRetentionPeriodInDays)
	if !ok {
		// Accepted, it would retain nothing: refused instead.
		return nil, fmt.Sprintf("RetentionPolicy '%s' has no '%s'", pe.EntityID, KeyRetentionPeriodInDays), nil
	}
	if days < 0 || days > 36500 || days != float64(int(days)) {
		return nil, fmt.Sprintf("invalid '%s' of RetentionPolicy '%s': whole days, 0 to 36500", KeyRetentionPeriodInDays, pe.EntityID), nil
	}
	start := s.c.At
	switch src := entityString(&pe, KeyRetentionStartDateSourceType); src {
	case "", RetentionStartInserted:
		d, err := getDoc(s.t, s.c.Site, s.doc)
		if err != nil {
			return nil, "", err
		}
		start = d.InsertedDate
	case RetentionStartPolicyAdded:
	default:
		return nil, fmt.Sprintf("invalid '%s' of RetentionPolicy '%s': use DATE_INSERTED or DATE_POLICY_ADDED", KeyRetentionStartDateSourceType, pe.EntityID), nil
	}
	start = start.UTC().Truncate(time.Second)
	r := &DocRetention{DocumentID: s.doc, PolicyID: pe.EntityID, Mode: mode, Start: start,
		End: start.AddDate(0, 0, int(days)), Status: RetentionStatusActive}
	if disp != nil && len(disp.Entities) > 0 {
		dref := disp.Entities[0]
		if dref.EntityTypeID != KeyDispositionPolicy {
			return nil, "'DispositionPolicy' must name a DispositionPolicy entity", nil
		}
		var de Entity
		err := s.t.getJSON(entityKey(s.c.Site, dref.EntityTypeID, dref.EntityID), &de)
		if errors.Is(err, ErrNotFound) {
			return nil, entityNotFound(dref.EntityID).Error(), nil
		}
		if err != nil {
			return nil, "", err
		}
		act := entityString(&de, KeyDispositionAction)
		if act != "" && act != DispositionSoftDelete && act != DispositionDelete {
			return nil, fmt.Sprintf("invalid '%s' of DispositionPolicy '%s': use SOFT_DELETE or DELETE", KeyDispositionAction, de.EntityID), nil
		}
		after, _ := entityNumber(&de, KeyDispositionPeriodInDays)
		if after < 0 || after > 36500 || after != float64(int(after)) {
			return nil, fmt.Sprintf("invalid '%s' of DispositionPolicy '%s'", KeyDispositionPeriodInDays, de.EntityID), nil
		}
		dd := r.End.AddDate(0, 0, int(after))
		r.DispositionPolicyID, r.DispositionAction, r.DispositionDate = de.EntityID, act, &dd
	}
	return r, "", nil
}

func putRetention(t *tx, site string, r *DocRetention) error {
	if err := t.setJSON(retentionKey(site, r.DocumentID), r); err != nil {
		return err
	}
	if due, ok := r.due(); ok {
		return t.set(retentionDueKey(site, due, r.DocumentID), nil)
	}
	return nil
}

func (s *docAttrSet) dropRetention(r *DocRetention) error {
	if due, ok := r.due(); ok {
		if err := s.t.del(retentionDueKey(s.c.Site, due, r.DocumentID)); err != nil {
			return err
		}
	}
	return s.t.del(retentionKey(s.c.Site, r.DocumentID))
}

// Retention returns a document's retention record (ErrNotFound: none).
func (d *DB) Retention(site, doc string) (*DocRetention, error) {
	var r DocRetention
	err := d.view(func(t *tx) error { return t.getJSON(retentionKey(site, doc), &r) })
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// RetentionDue lists up to limit documents of site whose retention end or
// disposition date is at or before at, oldest first.
func (d *DB) RetentionDue(site string, at time.Time, after string, limit int) (ids []string, next string, err error) {
	err = d.view(func(t *tx) error {
		for _, k := range t.keys(retentionDuePrefix(site)) {
			rest := strings.TrimPrefix(string(k), string(retentionDuePrefix(site)))
			ts, doc, ok := strings.Cut(rest, "/")
			if !ok || rest <= after {
				continue
			}
			if ts > tsHex(at) {
				break
			}
			ids, next = append(ids, doc), rest
			if len(ids) >= limit {
				break
			}
		}
		return nil
	})
	return ids, next, err
}

// checkUpdateMutable refuses an UpdateDocument that moves a governed
// document or changes its content (tags, metadata and attributes other
// than the policies stay writable; docAttrSet.syncRetention guards those).
func checkUpdateMutable(t *tx, c *Command, d *Document, p *UpdateDocument) error {
	if (p.Path != nil && *p.Path != d.Path) || p.Content != nil || len(p.Chunks) > 0 || p.ContentType != nil ||
		p.Checksum != nil || p.ChecksumType != nil {
		return checkMutable(t, c, d)
	}
	return nil
}
