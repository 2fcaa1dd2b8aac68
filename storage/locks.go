package storage

// Checkout and legal hold (PUT /documents/{id}/checkout, PUT and DELETE
// /documents/{id}/legalHold). A lock is kept as the reserved document
// attributes of API-NAMES Appendix D, so it shows and is searchable like
// any attribute, and only OpSetDocumentLock writes them:
//
//	Checkout             BOOLEAN true while checked out for editing
//	CheckoutForLegalHold BOOLEAN true while under legal hold
//	LockedBy             STRING  the user holding the lock
//	LockedDate           DATE    when the lock was taken
//
// checkMutable (retention.go) refuses, inside every applier that changes
// a document's content, moves it or removes it: anyone but the holder
// while it is checked out, and everyone while it is under legal hold. A
// lock on a document also holds its artifacts.

import (
	"errors"
	"fmt"
	"slices"
)

// Reserved attribute keys of a document's lock.
const (
	KeyCheckout             = "Checkout"
	KeyCheckoutForLegalHold = "CheckoutForLegalHold"
	KeyLockedBy             = "LockedBy"
	KeyLockedDate           = "LockedDate"
)

var lockKeys = []string{KeyCheckout, KeyCheckoutForLegalHold, KeyLockedBy, KeyLockedDate}

func isLockKey(key string) bool { return slices.Contains(lockKeys, key) }

// Lock kinds of SetDocumentLock.
const (
	LockCheckout  = "checkout"
	LockLegalHold = "legalHold"
)

// SetDocumentLock is the payload of OpSetDocumentLock.
type SetDocumentLock struct {
	DocumentID string `json:"documentId"`
	ArtifactID string `json:"artifactId,omitempty"`
	Kind       string `json:"kind"`              // LockCheckout or LockLegalHold
	Release    bool   `json:"release,omitempty"` // check in, or lift the legal hold
	// Force lets an administrator check in another user's checkout. The
	// server sets it from the caller's permissions.
	Force bool `json:"force,omitempty"`
}

// DocumentLock is a document's lock as read back.
type DocumentLock struct {
	LockedBy  string
	LegalHold bool
}

// readLock reads the lock of document doc; nil when it has none.
func readLock(t *tx, site, doc string) (*DocumentLock, error) {
	var by DocAttribute
	err := t.getJSON(docAttrKey(site, doc, KeyLockedBy), &by)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	l := &DocumentLock{}
	if len(by.Strings) > 0 {
		l.LockedBy = by.Strings[0]
	}
	var hold DocAttribute
	err = t.getJSON(docAttrKey(site, doc, KeyCheckoutForLegalHold), &hold)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	l.LegalHold = err == nil && hold.Boolean != nil && *hold.Boolean
	return l, nil
}

// checkLock refuses user's change of d while d, or the document d is an
// artifact of, is locked against it.
func checkLock(t *tx, site, user string, d *Document) error {
	for _, id := range []string{d.DocumentID, d.ArtifactOf} {
		if id == "" {
			continue
		}
		l, err := readLock(t, site, id)
		if err != nil || l == nil {
			if err != nil {
				return err
			}
			continue
		}
		if l.LegalHold {
			return &ConflictError{Msg: fmt.Sprintf("document '%s' is under legal hold", id)}
		}
		if l.LockedBy != user {
			return &ConflictError{Msg: fmt.Sprintf("document '%s' is checked out by '%s'", id, l.LockedBy)}
		}
	}
	return nil
}

func applySetDocumentLock(t *tx, c *Command) (any, error) {
	p, err := decode[SetDocumentLock](c)
	if err != nil {
		return nil, err
	}
	if p.Kind != LockCheckout && p.Kind != LockLegalHold {
		return nil, Invalid("kind", "kind must be checkout or legalHold")
	}
	var d *Document
	if p.ArtifactID == "" {
		if d, err = getLiveDoc(t, c.Site, p.DocumentID); err == nil && d.ArtifactOf != "" {
			err = docNotFound(p.DocumentID)
		}
	} else {
		_, d, err = getArtifact(t, c.Site, p.DocumentID, p.ArtifactID)
	}
	if err != nil {
		return nil, err
	}
	cur, err := readLock(t, c.Site, d.DocumentID)
	if err != nil {
		return nil, err
	}
	s, err := loadDocAttrs(t, c, d.DocumentID, false)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Release && p.Kind == LockLegalHold:
		if cur == nil || !cur.LegalHold {
			return d, nil
		}
		for _, k := range lockKeys {
			delete(s.cur, k)
		}
	case p.Release:
		if cur == nil {
			return d, nil
		}
		if cur.LegalHold {
			return nil, &ConflictError{Msg: fmt.Sprintf("document '%s' is under legal hold", d.DocumentID)}
		}
		if cur.LockedBy != c.User && !p.Force {
			return nil, &ConflictError{Msg: fmt.Sprintf("document '%s' is checked out by '%s'", d.DocumentID, cur.LockedBy)}
		}
		for _, k := range lockKeys {
			delete(s.cur, k)
		}
	default:
		if cur != nil && (cur.LockedBy != c.User || (cur.LegalHold && p.Kind == LockCheckout)) {
			if cur.LegalHold {
				return nil, &ConflictError{Msg: fmt.Sprintf("document '%s' is under legal hold", d.DocumentID)}
			}
			return nil, &ConflictError{Msg: fmt.Sprintf("document '%s' is already checked out by '%s'", d.DocumentID, cur.LockedBy)}
		}
		if cur != nil && cur.LegalHold == (p.Kind == LockLegalHold) {
			return d, nil // already held this way by this user: keep the first date
		}
		yes := true
		for _, k := range lockKeys {
			delete(s.cur, k)
		}
		flag := KeyCheckout
		if p.Kind == LockLegalHold {
			flag = KeyCheckoutForLegalHold
		}
		s.cur[flag] = &DocAttribute{Key: flag, ValueType: DataBoolean, Boolean: &yes, InsertedDate: c.At, UserID: c.User}
		s.cur[KeyLockedBy] = &DocAttribute{Key: KeyLockedBy, ValueType: DataString, Strings: []string{c.User}, InsertedDate: c.At, UserID: c.User}
		dateAttr(s, KeyLockedDate, c.At)
	}
	s.locking = true
	if err := s.save(); err != nil {
		return nil, err
	}
	d.LastModifiedDate = c.At
	return d, putDoc(t, d)
}

// keepLock undoes any change of the lock attributes that did not come
// from OpSetDocumentLock (a replace of all attributes drops them, for
// example). Writing one by key is refused earlier (resolve).
func (s *docAttrSet) keepLock() {
	if s.locking {
		return
	}
	for _, k := range lockKeys {
		if a, ok := s.old[k]; ok {
			s.cur[k] = a
		} else {
			delete(s.cur, k)
		}
	}
}
