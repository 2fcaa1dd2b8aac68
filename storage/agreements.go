package storage

// Agreement expiration (SERVICE-SPEC.md §3.3; API.md "Reminders and
// notifications"): once a day, Agreement dossiers (resourceType DOSSIER
// with an AgreementStatus) whose AgreementExpirationDate has passed and
// whose status is Active, Signed or Renewal Review become Expired. Other
// statuses and documents are left alone.

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// Agreement attribute keys (API-NAMES Appendix D) and statuses.
const (
	KeyAgreementStatus         = "AgreementStatus"
	KeyAgreementExpirationDate = "AgreementExpirationDate"
	AgreementExpired           = "Expired"
)

// agreementExpiring are the statuses expiration acts on.
var agreementExpiring = []string{"Active", "Signed", "Renewal Review"}

// ExpireAgreements is the payload of OpExpireAgreements.
type ExpireAgreements struct {
	DocumentIDs []string `json:"documentIds"`
}

// AgreementsDue lists up to limit documents of site whose
// AgreementExpirationDate is at or before at, after the cursor after.
func (d *DB) AgreementsDue(site string, at time.Time, after string, limit int) (ids []string, next string, err error) {
	pfx := attrIndexPrefix(site, KeyAgreementExpirationDate)
	until := at.UTC().Format(DateLayout)
	err = d.view(func(t *tx) error {
		for _, k := range t.keysFrom(pfx, append([]byte(string(pfx)), after...)) {
			rest := string(k[len(pfx):])
			if after != "" && rest <= after {
				continue
			}
			value, doc, ok := strings.Cut(rest, "\x00")
			if !ok {
				continue
			}
			if value > until {
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

// applyExpireAgreements sets AgreementStatus Expired on each listed
// Agreement dossier that is due and in an expiring status; it returns how
// many changed. Run again, it changes nothing.
func applyExpireAgreements(t *tx, c *Command) (any, error) {
	p, err := decode[ExpireAgreements](c)
	if err != nil {
		return nil, err
	}
	if len(p.DocumentIDs) > 1000 {
		return nil, Invalid("documentIds", "at most 1000 documents per command")
	}
	n := 0
	for _, id := range p.DocumentIDs {
		d, err := getLiveDoc(t, c.Site, id)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return nil, err
		}
		if d.ResourceType != "DOSSIER" {
			continue
		}
		s, err := loadDocAttrs(t, c, id, false)
		if err != nil {
			return nil, err
		}
		st, exp := s.cur[KeyAgreementStatus], s.cur[KeyAgreementExpirationDate]
		if st == nil || exp == nil || len(st.Strings) == 0 || len(exp.Strings) == 0 ||
			!slices.Contains(agreementExpiring, st.Strings[0]) || exp.Strings[0] > c.At.UTC().Format(DateLayout) {
			continue
		}
		s.cur[KeyAgreementStatus] = &DocAttribute{Key: KeyAgreementStatus, ValueType: DataString, Strings: []string{AgreementExpired}, InsertedDate: c.At, UserID: c.User}
		if err := s.save(); err != nil {
			return nil, err
		}
		d.LastModifiedDate = c.At
		if err := putDoc(t, d); err != nil {
			return nil, err
		}
		n++
	}
	return n, nil
}
