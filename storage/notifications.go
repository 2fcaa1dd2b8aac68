package storage

// Document notifications (FormKiQ's DocumentNotification; API.md
// "Reminders and notifications"): a record per notification of a
// document, addressed to cc and bcc. Reminder policies make PENDING ones
// on their due date, which the daily reminders job turns into
// NOTIFICATION actions (ACTION_CREATED); every NOTIFICATION action queued
// otherwise (by a client, a review) is recorded as ACTION_CREATED at once.
// Each recipient address indexes the records addressed to it, for
// GET /userNotifications.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Reminder policy attributes (API-NAMES Appendix D, 1.19.1) and the
// document attribute the store computes from them.
const (
	KeyReminderPolicy                 = "ReminderPolicy"
	KeyReminderDateSourceAttributeKey = "ReminderDateSourceAttributeKey"
	KeyReminderPeriod                 = "ReminderPeriod"
	KeyReminderRepeatInterval         = "ReminderRepeatInterval"
	KeyReminderNotificationType       = "ReminderNotificationType"
	KeyReminderNotificationToCc       = "ReminderNotificationToCc"
	KeyReminderNotificationToBcc      = "ReminderNotificationToBcc"
	KeyReminderNotificationSubject    = "ReminderNotificationSubject"
	KeyReminderNotificationText       = "ReminderNotificationText"
	KeyReminderDueDate                = "ReminderDueDate"
)

// Notification statuses and types.
const (
	NotificationPending       = "PENDING"
	NotificationActionCreated = "ACTION_CREATED"
	NotificationEmail         = "EMAIL"
	NotificationInApp         = "IN_APP"
)

// DocNotification is one notification record of a document.
type DocNotification struct {
	DocumentID       string    `json:"documentId"`
	Key              string    `json:"key"`
	EntityTypeID     string    `json:"entityTypeId,omitempty"`
	EntityID         string    `json:"entityId,omitempty"`
	CC               []string  `json:"cc,omitempty"`
	BCC              []string  `json:"bcc,omitempty"`
	NotificationType string    `json:"notificationType"`
	NotificationDate time.Time `json:"notificationDate"`
	Status           string    `json:"status"`
	ActionSk         string    `json:"actionSk,omitempty"`
	Subject          string    `json:"subject,omitempty"`
	Text             string    `json:"text,omitempty"`
	RepeatDays       int       `json:"repeatDays,omitempty"`
	UserID           string    `json:"userId,omitempty"`
	InsertedDate     time.Time `json:"insertedDate"`
}

func notificationKey(site, doc, key string) []byte {
	return []byte(pfxNotification + sk(site) + "/" + doc + "/" + key)
}

func notificationPrefix(site, doc string) []byte {
	return []byte(pfxNotification + sk(site) + "/" + doc + "/")
}

func notificationDueKey(site string, at time.Time, doc, key string) []byte {
	return []byte(pfxNotificationDue + sk(site) + "/" + tsHex(at) + "/" + doc + "/" + key)
}

func notificationDuePrefix(site string) []byte { return []byte(pfxNotificationDue + sk(site) + "/") }

func userNotificationKey(addr, site string, n *DocNotification) []byte {
	return []byte(pfxUserNotification + addr + "\x00" + sk(site) + "/" + revTime(n.NotificationDate) + "/" + n.DocumentID + "/" + n.Key)
}

func userNotificationPrefix(addr, site string) []byte {
	return []byte(pfxUserNotification + addr + "\x00" + sk(site) + "/")
}

// normAddrs lower-cases, trims and drops empty addresses.
func normAddrs(list []string) []string {
	var out []string
	for _, a := range list {
		for _, p := range strings.Split(a, ",") {
			if p = strings.ToLower(strings.TrimSpace(p)); p != "" && len(p) <= 320 {
				out = append(out, p)
			}
		}
	}
	return out
}

// putNotification writes n (a new record) and its indexes.
func putNotification(t *tx, site string, n *DocNotification) error {
	if n.Key == "" {
		base := tsHex(n.NotificationDate)
		for i := 0; ; i++ {
			k := fmt.Sprintf("%s-%04x", base, i)
			ok, err := t.exists(notificationKey(site, n.DocumentID, k))
			if err != nil {
				return err
			}
			if !ok {
				n.Key = k
				break
			}
		}
	}
	if err := t.setJSON(notificationKey(site, n.DocumentID, n.Key), n); err != nil {
		return err
	}
	if n.Status == NotificationPending {
		if err := t.set(notificationDueKey(site, n.NotificationDate, n.DocumentID, n.Key), nil); err != nil {
			return err
		}
	}
	for _, a := range append(append([]string{}, n.CC...), n.BCC...) {
		if err := t.set(userNotificationKey(a, site, n), nil); err != nil {
			return err
		}
	}
	return nil
}

// dropNotification removes a record and its indexes.
func dropNotification(t *tx, site string, n *DocNotification) error {
	if err := t.del(notificationKey(site, n.DocumentID, n.Key)); err != nil {
		return err
	}
	if err := t.del(notificationDueKey(site, n.NotificationDate, n.DocumentID, n.Key)); err != nil {
		return err
	}
	for _, a := range append(append([]string{}, n.CC...), n.BCC...) {
		if err := t.del(userNotificationKey(a, site, n)); err != nil {
			return err
		}
	}
	return nil
}

// recordActionNotification records a NOTIFICATION action being queued on
// doc as an ACTION_CREATED notification addressed to its cc and bcc.
func recordActionNotification(t *tx, c *Command, doc string, a *Action) error {
	var p map[string]any
	if len(a.Parameters) > 0 {
		if err := json.Unmarshal(a.Parameters, &p); err != nil {
			return nil // the action's own checks report bad parameters
		}
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	n := &DocNotification{DocumentID: doc, NotificationType: NotificationEmail, NotificationDate: c.At,
		Status: NotificationActionCreated, ActionSk: strconv.Itoa(a.Seq), CC: normAddrs([]string{str("notificationToCc")}),
		BCC: normAddrs([]string{str("notificationToBcc")}), Subject: str("notificationSubject"), UserID: c.User, InsertedDate: c.At}
	return putNotification(t, c.Site, n)
}

// syncReminder runs in docAttrSet.save: it computes ReminderDueDate from
// the document's ReminderPolicy and the date attribute the policy names,
// and keeps one PENDING notification on it.
func (s *docAttrSet) syncReminder() error {
	pol, src := s.cur[KeyReminderPolicy], ""
	if pol == nil && s.old[KeyReminderPolicy] == nil {
		delete(s.cur, KeyReminderDueDate)
		return nil
	}
	var ent *Entity
	if pol != nil && len(pol.Entities) > 0 {
		ref := pol.Entities[0]
		if ref.EntityTypeID != KeyReminderPolicy {
			s.fail(KeyReminderPolicy, "'ReminderPolicy' must name a ReminderPolicy entity")
			return &ValidationError{Items: s.errs}
		}
		ent = &Entity{}
		err := s.t.getJSON(entityKey(s.c.Site, ref.EntityTypeID, ref.EntityID), ent)
		if errors.Is(err, ErrNotFound) {
			s.fail(KeyReminderPolicy, entityNotFound(ref.EntityID).Error())
			return &ValidationError{Items: s.errs}
		}
		if err != nil {
			return err
		}
		if src = entityString(ent, KeyReminderDateSourceAttributeKey); src == "" {
			s.fail(KeyReminderPolicy, fmt.Sprintf("ReminderPolicy '%s' has no '%s'", ent.EntityID, KeyReminderDateSourceAttributeKey))
			return &ValidationError{Items: s.errs}
		}
	}
	if pol != nil && sameAttrValue(s.old[KeyReminderPolicy], pol) && sameAttrValue(s.old[src], s.cur[src]) && !s.created {
		if a, ok := s.old[KeyReminderDueDate]; ok {
			s.cur[KeyReminderDueDate] = a
		} else {
			delete(s.cur, KeyReminderDueDate)
		}
		return nil
	}
	if !s.created {
		if err := s.dropPendingReminders(); err != nil {
			return err
		}
	}
	delete(s.cur, KeyReminderDueDate)
	if ent == nil {
		return nil
	}
	base, ok := s.reminderBase(src)
	if !ok {
		return nil // the date is not set yet: the reminder waits for it
	}
	period, okP := entityNumber(ent, KeyReminderPeriod)
	repeat, _ := entityNumber(ent, KeyReminderRepeatInterval)
	if (okP && (period != math.Trunc(period) || math.Abs(period) > 36500)) || repeat < 0 || repeat > 36500 || repeat != math.Trunc(repeat) {
		s.fail(KeyReminderPolicy, fmt.Sprintf("invalid '%s' or '%s' of ReminderPolicy '%s': whole days", KeyReminderPeriod, KeyReminderRepeatInterval, ent.EntityID))
		return &ValidationError{Items: s.errs}
	}
	typ := strings.ToUpper(entityString(ent, KeyReminderNotificationType))
	if typ == "" {
		typ = NotificationEmail
	}
	if typ != NotificationEmail && typ != NotificationInApp {
		s.fail(KeyReminderPolicy, fmt.Sprintf("invalid '%s' of ReminderPolicy '%s': use EMAIL or IN_APP", KeyReminderNotificationType, ent.EntityID))
		return &ValidationError{Items: s.errs}
	}
	due := base.AddDate(0, 0, int(period))
	dateAttr(s, KeyReminderDueDate, due)
	ccs := entityAttr(ent, KeyReminderNotificationToCc)
	bccs := entityAttr(ent, KeyReminderNotificationToBcc)
	n := &DocNotification{DocumentID: s.doc, EntityTypeID: KeyReminderPolicy, EntityID: ent.EntityID, NotificationType: typ,
		NotificationDate: due, Status: NotificationPending, Subject: entityString(ent, KeyReminderNotificationSubject),
		Text: entityString(ent, KeyReminderNotificationText), RepeatDays: int(repeat), UserID: s.c.User, InsertedDate: s.c.At}
	if ccs != nil {
		n.CC = normAddrs(ccs.Strings)
	}
	if bccs != nil {
		n.BCC = normAddrs(bccs.Strings)
	}
	if typ == NotificationEmail && len(n.CC)+len(n.BCC) == 0 {
		s.fail(KeyReminderPolicy, fmt.Sprintf("ReminderPolicy '%s' has no recipient ('%s' or '%s')", ent.EntityID, KeyReminderNotificationToCc, KeyReminderNotificationToBcc))
		return &ValidationError{Items: s.errs}
	}
	return putNotification(s.t, s.c.Site, n)
}

// reminderBase is the date the reminder counts from: the document
// attribute src (a DATE), or its insertedDate for DATE_INSERTED.
func (s *docAttrSet) reminderBase(src string) (time.Time, bool) {
	if src == RetentionStartInserted {
		d, err := getDoc(s.t, s.c.Site, s.doc)
		if err != nil {
			return s.c.At, true // being created
		}
		return d.InsertedDate, true
	}
	a := s.cur[src]
	if a == nil || len(a.Strings) == 0 {
		return time.Time{}, false
	}
	at, err := time.Parse(DateLayout, a.Strings[0])
	if err != nil {
		if at, err = time.Parse("2006-01-02", a.Strings[0]); err != nil {
			return time.Time{}, false
		}
	}
	return at.UTC(), true
}

// dropPendingReminders removes the document's PENDING reminder records.
func (s *docAttrSet) dropPendingReminders() error {
	var drop []DocNotification
	keep := func(n DocNotification) {
		if n.Status == NotificationPending {
			drop = append(drop, n)
		}
	}
	var err error
	if s.purging {
		err = eachGathered(s.t, s.reminders, func(_ []byte, n *DocNotification) error {
			keep(*n)
			return nil
		})
	} else {
		err = s.t.each(notificationPrefix(s.c.Site, s.doc), func(_, v []byte) error {
			var n DocNotification
			if err := json.Unmarshal(v, &n); err != nil {
				return err
			}
			keep(n)
			return nil
		})
	}
	if err != nil {
		return err
	}
	for i := range drop {
		if err := dropNotification(s.t, s.c.Site, &drop[i]); err != nil {
			return err
		}
	}
	return nil
}

// RemindersDue is the payload of OpRemindersDue: due notifications of a
// site, by the key suffix RemindersDue returned.
type RemindersDue struct {
	Due []string `json:"due"`
}

// RemindersDueResult counts what a run did.
type RemindersDueResult struct {
	Actions int `json:"actions"` // NOTIFICATION actions queued
	InApp   int `json:"inApp"`   // IN_APP notifications marked
}

// applyRemindersDue turns due PENDING notifications into NOTIFICATION
// actions (EMAIL) or marks them (IN_APP), ACTION_CREATED, and schedules
// the next occurrence of a repeating one. A record no longer PENDING is
// passed over, so a repeated run does nothing twice.
func applyRemindersDue(t *tx, c *Command) (any, error) {
	p, err := decode[RemindersDue](c)
	if err != nil {
		return nil, err
	}
	if len(p.Due) > 1000 {
		return nil, Invalid("due", "at most 1000 notifications per command")
	}
	res := &RemindersDueResult{}
	for _, due := range p.Due {
		parts := strings.SplitN(due, "/", 3)
		if len(parts) != 3 {
			continue
		}
		doc, key := parts[1], parts[2]
		var n DocNotification
		err := t.getJSON(notificationKey(c.Site, doc, key), &n)
		if errors.Is(err, ErrNotFound) {
			if err := t.del([]byte(string(notificationDuePrefix(c.Site)) + due)); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if n.Status != NotificationPending || n.NotificationDate.After(c.At) {
			continue
		}
		if err := t.del(notificationDueKey(c.Site, n.NotificationDate, doc, key)); err != nil {
			return nil, err
		}
		n.Status = NotificationActionCreated
		if n.NotificationType == NotificationEmail {
			d, err := getLiveDoc(t, c.Site, doc)
			if errors.Is(err, ErrNotFound) {
				continue // deleted or in the trash: no reminder
			}
			if err != nil {
				return nil, err
			}
			params, err := json.Marshal(map[string]string{"notificationType": "email", "notificationSubject": n.Subject,
				"notificationToCc": strings.Join(n.CC, ","), "notificationToBcc": strings.Join(n.BCC, ","), "notificationText": n.Text})
			if err != nil {
				return nil, err
			}
			a := Action{Type: "NOTIFICATION", Parameters: params, Metadata: map[string]string{"reminder": n.Key}}
			acts := []Action{a}
			if err := addActions(t, c, d, acts); err != nil {
				return nil, err
			}
			if err := putDocActions(t, d); err != nil {
				return nil, err
			}
			n.ActionSk = strconv.Itoa(acts[0].Seq)
			res.Actions++
		} else {
			res.InApp++
		}
		if err := t.setJSON(notificationKey(c.Site, doc, key), &n); err != nil {
			return nil, err
		}
		if n.RepeatDays > 0 {
			next := n
			next.Key, next.Status, next.ActionSk, next.InsertedDate = "", NotificationPending, "", c.At
			next.NotificationDate = n.NotificationDate.AddDate(0, 0, n.RepeatDays)
			for !next.NotificationDate.After(c.At) {
				next.NotificationDate = next.NotificationDate.AddDate(0, 0, n.RepeatDays)
			}
			if err := putNotification(t, c.Site, &next); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// RemindersDue lists up to limit due notifications of site (at or before
// at) after the cursor after, as key suffixes for OpRemindersDue.
func (d *DB) RemindersDue(site string, at time.Time, after string, limit int) (due []string, next string, err error) {
	pfx := notificationDuePrefix(site)
	err = d.view(func(t *tx) error {
		for _, k := range t.keysFrom(pfx, append([]byte(string(pfx)), after...)) {
			rest := string(k[len(pfx):])
			if rest <= after {
				continue
			}
			if rest[:min(16, len(rest))] > tsHex(at) {
				break
			}
			due, next = append(due, rest), rest
			if len(due) >= limit {
				break
			}
		}
		return nil
	})
	return due, next, err
}

// DocumentNotifications lists a document's notification records by key.
func (d *DB) DocumentNotifications(site, doc, after string, limit int) ([]DocNotification, string, error) {
	return listPage(d, notificationPrefix(site, doc), after, limit, func(n *DocNotification) string { return n.Key })
}

// UserNotifications lists the notifications addressed to addr in site,
// newest first, after the key suffix after.
func (d *DB) UserNotifications(addr, site, after string, limit int) (out []DocNotification, next string, err error) {
	pfx := userNotificationPrefix(strings.ToLower(addr), site)
	err = d.view(func(t *tx) error {
		var last string
		for _, k := range t.keysFrom(pfx, append([]byte(string(pfx)), after...)) {
			rest := string(k[len(pfx):])
			if after != "" && rest <= after {
				continue
			}
			if len(out) == limit {
				next = last
				return nil
			}
			parts := strings.SplitN(rest, "/", 3)
			if len(parts) != 3 {
				continue
			}
			var n DocNotification
			err := t.getJSON(notificationKey(site, parts[1], parts[2]), &n)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			out, last = append(out, n), rest
		}
		return nil
	})
	return out, next, err
}
