package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Sequence numbers documents: it generates unique values of a STRING
// attribute from a pattern such as "INV-{YEAR}-{SEQUENCE:6}". The counter
// lives in Badger and moves in the same transaction as the document that
// gets the number, so numbers are unique and, when only documents take
// them, gap-free, across crashes too.
type Sequence struct {
	SequenceID   string `json:"sequenceId"`
	AttributeKey string `json:"attributeKey"`
	Pattern      string `json:"pattern"`
	// Start is the first number of each period (default 1).
	Start int64 `json:"start"`
	// Reset restarts the numbering each period: NEVER, YEARLY, MONTHLY or
	// DAILY (default NEVER).
	Reset string `json:"reset"`
	// AssignOnCreate gives every new document of the site that lacks the
	// attribute the next value (default true).
	AssignOnCreate bool      `json:"assignOnCreate"`
	InsertedDate   time.Time `json:"insertedDate"`
	UserID         string    `json:"userId,omitempty"`
}

// Sequence reset periods.
var SequenceResets = []string{"NEVER", "YEARLY", "MONTHLY", "DAILY"}

var seqToken = regexp.MustCompile(`\{(YEAR|YY|MONTH|DAY|SEQUENCE(?::(\d{1,2}))?)\}`)

// CheckSequencePattern validates a pattern: it must contain {SEQUENCE}
// exactly once and only known tokens.
func CheckSequencePattern(p string) string {
	if strings.Count(p, "{SEQUENCE") != 1 || !seqToken.MatchString(p) {
		return "'pattern' must contain {SEQUENCE} or {SEQUENCE:n} once"
	}
	rest := seqToken.ReplaceAllString(p, "")
	if strings.ContainsAny(rest, "{}") {
		return "'pattern' has an unknown token; use {YEAR}, {YY}, {MONTH}, {DAY} and {SEQUENCE:n}"
	}
	return ""
}

// format renders n for the time at.
func (s *Sequence) format(n uint64, at time.Time) string {
	at = at.UTC()
	return seqToken.ReplaceAllStringFunc(s.Pattern, func(tok string) string {
		m := seqToken.FindStringSubmatch(tok)
		switch m[1] {
		case "YEAR":
			return fmt.Sprintf("%04d", at.Year())
		case "YY":
			return fmt.Sprintf("%02d", at.Year()%100)
		case "MONTH":
			return fmt.Sprintf("%02d", int(at.Month()))
		case "DAY":
			return fmt.Sprintf("%02d", at.Day())
		}
		width, _ := strconv.Atoi(m[2])
		return fmt.Sprintf("%0*d", width, n)
	})
}

// period names the counter that at falls into.
func (s *Sequence) period(at time.Time) string {
	at = at.UTC()
	switch s.Reset {
	case "YEARLY":
		return at.Format("2006")
	case "MONTHLY":
		return at.Format("2006-01")
	case "DAILY":
		return at.Format("2006-01-02")
	}
	return "all"
}

// next takes the next number of s in the transaction.
func (s *Sequence) next(t *tx, site string, at time.Time) (string, error) {
	k := sequenceCounterKey(site, s.SequenceID, s.period(at))
	var n uint64
	b, err := t.getRaw(k)
	switch {
	case err == nil:
		n = decodeUint64(b) + 1
	case errors.Is(err, ErrNotFound):
		n = uint64(max(s.Start, 0))
	default:
		return "", err
	}
	if err := t.set(k, encodeUint64(n)); err != nil {
		return "", err
	}
	return s.format(n, at), nil
}

// AddSequence is the payload of OpAddSequence.
type AddSequence struct {
	Sequence Sequence `json:"sequence"`
}

// DeleteSequence is the payload of OpDeleteSequence.
type DeleteSequence struct {
	SequenceID string `json:"sequenceId"`
}

// NextSequenceValue is the payload of OpNextSequenceValue: take a number,
// and give it to a document when DocumentID is set.
type NextSequenceValue struct {
	SequenceID string `json:"sequenceId"`
	DocumentID string `json:"documentId,omitempty"`
}

func sequenceNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Sequence '%s' not found", id)}
}

func applyAddSequence(t *tx, c *Command) (any, error) {
	p, err := decode[AddSequence](c)
	if err != nil {
		return nil, err
	}
	s := p.Sequence
	def, err := lookupDef(t, c.Site, s.AttributeKey)
	if errors.Is(err, ErrNotFound) {
		return nil, Invalid("attributeKey", msgAttrNotFound(s.AttributeKey))
	}
	if err != nil {
		return nil, err
	}
	if def.DataType != DataString || IsReservedAttribute(s.AttributeKey) {
		return nil, Invalid("attributeKey", "a sequence needs a STRING attribute")
	}
	owner, err := t.getRaw(sequenceByAttrKey(c.Site, s.AttributeKey))
	if err == nil {
		return nil, Invalid("attributeKey", fmt.Sprintf("attribute '%s' already has sequence '%s'", s.AttributeKey, owner))
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	// RulesDefinitionFields: a pattern within MaxKeyBytes keeps its values
	// ({SEQUENCE:99} pads to 99 digits) within MaxValueBytes.
	f := newDefFields(c)
	if f.name("pattern", s.Pattern); f.err() != nil {
		return nil, f.err()
	}
	s.InsertedDate, s.UserID = c.At, c.User
	if err := t.setJSON(sequenceKey(c.Site, s.SequenceID), s); err != nil {
		return nil, err
	}
	if err := t.set(sequenceByAttrKey(c.Site, s.AttributeKey), []byte(s.SequenceID)); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func applyDeleteSequence(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteSequence](c)
	if err != nil {
		return nil, err
	}
	var s Sequence
	if err := t.getJSON(sequenceKey(c.Site, p.SequenceID), &s); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, sequenceNotFound(p.SequenceID)
		}
		return nil, err
	}
	for _, k := range t.keys(sequenceCounterPrefix(c.Site, s.SequenceID)) {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	if err := t.del(sequenceByAttrKey(c.Site, s.AttributeKey)); err != nil {
		return nil, err
	}
	return nil, t.del(sequenceKey(c.Site, p.SequenceID))
}

func applyNextSequenceValue(t *tx, c *Command) (any, error) {
	p, err := decode[NextSequenceValue](c)
	if err != nil {
		return nil, err
	}
	var s Sequence
	if err := t.getJSON(sequenceKey(c.Site, p.SequenceID), &s); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, sequenceNotFound(p.SequenceID)
		}
		return nil, err
	}
	if p.DocumentID == "" {
		return s.next(t, c.Site, c.At)
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(docAttrKey(c.Site, d.DocumentID, s.AttributeKey))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, Invalid("documentId", fmt.Sprintf("document '%s' already has attribute '%s'", d.DocumentID, s.AttributeKey))
	}
	v, err := s.next(t, c.Site, c.At)
	if err != nil {
		return nil, err
	}
	if err := writeDocAttributes(t, c, d.DocumentID, []AttributeInput{{Key: s.AttributeKey, StringValue: &v}}, AttrSet, false); err != nil {
		return nil, err
	}
	d.LastModifiedDate = c.At
	return v, putDoc(t, d)
}

// assignSequences gives a new document the next value of every sequence
// that numbers documents on creation and whose attribute it lacks.
func assignSequences(s *docAttrSet) error {
	if !s.created {
		return nil
	}
	var seqs []Sequence
	if err := s.t.scanCached(sequencePrefix(s.c.Site), func(_, v []byte) error {
		var q Sequence
		if err := json.Unmarshal(v, &q); err != nil {
			return err
		}
		seqs = append(seqs, q)
		return nil
	}); err != nil {
		return err
	}
	for i := range seqs {
		q := &seqs[i]
		if !q.AssignOnCreate {
			continue
		}
		if _, ok := s.cur[q.AttributeKey]; ok {
			continue
		}
		v, err := q.next(s.t, s.c.Site, s.c.At)
		if err != nil {
			return err
		}
		s.cur[q.AttributeKey] = &DocAttribute{Key: q.AttributeKey, ValueType: DataString, Strings: []string{v}, InsertedDate: s.c.At, UserID: s.c.User}
	}
	return nil
}

// GetSequence returns one sequence.
func (d *DB) GetSequence(site, id string) (*Sequence, error) {
	var s Sequence
	err := d.view(func(t *tx) error { return t.getJSON(sequenceKey(site, id), &s) })
	if errors.Is(err, ErrNotFound) {
		return nil, sequenceNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// SequenceCounter returns the last number s handed out in the period of
// at, 0 when none.
func (d *DB) SequenceCounter(site string, s *Sequence, at time.Time) (uint64, error) {
	var n uint64
	err := d.view(func(t *tx) error {
		b, err := t.getRaw(sequenceCounterKey(site, s.SequenceID, s.period(at)))
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		n = decodeUint64(b)
		return err
	})
	return n, err
}

// Sequences lists a site's sequences by id.
func (d *DB) Sequences(site string) ([]Sequence, error) {
	var out []Sequence
	err := d.view(func(t *tx) error {
		return t.each(sequencePrefix(site), func(_, v []byte) error {
			var s Sequence
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	})
	return out, err
}
