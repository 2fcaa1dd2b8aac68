package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Marks of the daily scheduler and the nightly disposition
// (DESIGN.md "Retention and the scheduler").

// JobRun is the payload of OpMarkJobRun and its record: job ran for the
// UTC day Day (YYYY-MM-DD).
type JobRun struct {
	Job  string    `json:"job"`
	Day  string    `json:"day"`
	At   time.Time `json:"at,omitempty"`
	Note string    `json:"note,omitempty"`
}

func checkJobRun(p *JobRun) error {
	if p.Job == "" || strings.ContainsAny(p.Job, "/\x00") {
		return Invalid("job", "invalid 'job'")
	}
	if _, err := time.Parse(time.DateOnly, p.Day); err != nil {
		return Invalid("day", "invalid 'day', use YYYY-MM-DD")
	}
	return nil
}

// applyMarkJobRun records that a job ran for a day. A second mark of the
// same job and day is refused (ConflictError): whoever marks first owns
// the day, and its runner does not run the job again.
func applyMarkJobRun(t *tx, c *Command) (any, error) {
	p, err := decode[JobRun](c)
	if err != nil {
		return nil, err
	}
	if err := checkJobRun(p); err != nil {
		return nil, err
	}
	ok, err := t.exists(jobRunKey(p.Job, p.Day))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("job '%s' already ran for %s", p.Job, p.Day)}
	}
	p.At = c.At
	return nil, t.setJSON(jobRunKey(p.Job, p.Day), p)
}

// JobRan returns the mark of job for day (ErrNotFound: not run).
func (d *DB) JobRan(job, day string) (*JobRun, error) {
	var r JobRun
	if err := d.view(func(t *tx) error { return t.getJSON(jobRunKey(job, day), &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}

// RetentionDueDocs is the payload of OpRetentionDue: the nightly run looks at
// documents whose retention end or disposition date has come.
type RetentionDueDocs struct {
	DocumentIDs []string `json:"documentIds"`
	// DefaultAction is the site's dispositionAction, used when the
	// DispositionPolicy names none.
	DefaultAction string `json:"defaultAction,omitempty"`
	// Day is the day of the run that does it.
	Day string `json:"day,omitempty"`
}

// Disposition is what the nightly run did to a document.
type Disposition struct {
	DocumentID          string    `json:"documentId"`
	Action              string    `json:"action"`
	RetentionPolicyID   string    `json:"retentionPolicyId"`
	DispositionPolicyID string    `json:"dispositionPolicyId"`
	Day                 string    `json:"day,omitempty"`
	At                  time.Time `json:"at"`
}

// RetentionDueResult counts what the run did.
type RetentionDueResult struct {
	Expired  int `json:"expired"`
	Disposed int `json:"disposed"`
	Held     int `json:"held,omitempty"` // due but locked (checkout or legal hold): looked at again the next night
}

// applyRetentionDue marks ended retentions EXPIRED and carries out due
// dispositions, each recorded. It is idempotent: a document already
// handled (or gone) is skipped, so a run repeated after a crash does
// nothing twice.
func applyRetentionDue(t *tx, c *Command) (any, error) {
	p, err := decode[RetentionDueDocs](c)
	if err != nil {
		return nil, err
	}
	if len(p.DocumentIDs) > 1000 {
		return nil, Invalid("documentIds", "at most 1000 documents per command")
	}
	res := &RetentionDueResult{}
	for _, id := range p.DocumentIDs {
		var r DocRetention
		err := t.getJSON(retentionKey(c.Site, id), &r)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		due, ok := r.due()
		if !ok || due.After(c.At) {
			continue
		}
		if err := t.del(retentionDueKey(c.Site, due, id)); err != nil {
			return nil, err
		}
		if r.Status == RetentionStatusActive {
			r.Status = RetentionStatusExpired
			if err := putRetention(t, c.Site, &r); err != nil {
				return nil, err
			}
			if err := setRetentionStatus(t, c, id, RetentionStatusExpired); err != nil {
				return nil, err
			}
			res.Expired++
			if due, ok = r.due(); !ok || due.After(c.At) {
				continue
			}
			if err := t.del(retentionDueKey(c.Site, due, id)); err != nil {
				return nil, err
			}
		}
		// The disposition date has come. A locked document waits: it
		// stays due, and the next nightly run looks at it again.
		if d, err := getDoc(t, c.Site, id); err == nil {
			if err := checkLock(t, c.Site, c.User, d); err != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) {
					return nil, err
				}
				if err := t.set(retentionDueKey(c.Site, due, id), nil); err != nil {
					return nil, err
				}
				res.Held++
				continue
			}
		} else if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		act := r.DispositionAction
		if act == "" {
			act = p.DefaultAction
		}
		if act != DispositionDelete {
			act = DispositionSoftDelete
		}
		r.DispositionDate = nil
		if err := t.setJSON(retentionKey(c.Site, id), &r); err != nil {
			return nil, err
		}
		op := OpSoftDelete
		if act == DispositionDelete {
			op = OpDeleteDocument
		}
		sub := MustCommand(op, c.Site, c.User, c.At, DocumentRef{DocumentID: id})
		if _, err := appliers[op](t, sub); err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		rec := Disposition{DocumentID: id, Action: act, RetentionPolicyID: r.PolicyID, DispositionPolicyID: r.DispositionPolicyID, Day: p.Day, At: c.At}
		if err := t.setJSON(dispositionKey(c.Site, id), &rec); err != nil {
			return nil, err
		}
		res.Disposed++
	}
	return res, nil
}

// setRetentionStatus rewrites the RetentionEffectiveStatus attribute and
// its index entry.
func setRetentionStatus(t *tx, c *Command, doc, to string) error {
	var a DocAttribute
	err := t.getJSON(docAttrKey(c.Site, doc, KeyRetentionEffectiveStatus), &a)
	if errors.Is(err, ErrNotFound) {
		a = DocAttribute{Key: KeyRetentionEffectiveStatus, ValueType: DataString}
	} else if err != nil {
		return err
	}
	for _, v := range a.indexValues() {
		if err := t.del(attrIndexKey(c.Site, KeyRetentionEffectiveStatus, v, doc)); err != nil {
			return err
		}
	}
	a.Strings, a.InsertedDate, a.UserID = []string{to}, c.At, c.User
	if err := t.setJSON(docAttrKey(c.Site, doc, KeyRetentionEffectiveStatus), &a); err != nil {
		return err
	}
	for _, v := range a.indexValues() {
		if err := t.set(attrIndexKey(c.Site, KeyRetentionEffectiveStatus, v, doc), nil); err != nil {
			return err
		}
	}
	return nil
}

// Dispositions lists what the nightly runs did in site, by document id.
func (d *DB) Dispositions(site string) ([]Disposition, error) {
	var out []Disposition
	err := d.view(func(t *tx) error {
		return t.each(dispositionPrefix(site), func(_, v []byte) error {
			var r Disposition
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}
