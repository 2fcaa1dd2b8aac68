package storage

// Document events (SERVICE-SPEC.md §6; API.md "Document events"): a
// CloudEvents 1.0 stream of document changes, action outcomes and malware
// scan results, delivered at least once to the site's event subscriptions
// and to the operator's event buses.
//
// Events come from the log: the command's own transaction writes each
// event to the outbox (eo/), next to the change it reports, so an event
// exists exactly when its change does, and a Raft replay writes the same
// events with the same ids on every node. The delivery worker (the
// pipeline, on the leader) reads the outbox, posts, and records each
// delivery with OpEventsDelivered, which takes the target off the event
// and deletes the event once no target is left. A crash between a post
// and its record posts again: at least once, with the same id.
//
// An event is written only when it has somewhere to go: the site's
// subscriptions that take its type, and the event buses the leader
// registered (OpSetEventBuses, from its configuration). The targets are
// fixed when the event is written.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// Event types (CloudEvents "type").
const (
	EventCreated         = "quire.document.created"
	EventUpdated         = "quire.document.updated"
	EventDeleted         = "quire.document.deleted"
	EventActionCompleted = "quire.document.actionCompleted"
	EventMalwareScan     = "quire.document.malwareScan"
)

// EventTypes lists every event type, in the order API.md gives them.
var EventTypes = []string{EventCreated, EventUpdated, EventDeleted, EventActionCompleted, EventMalwareScan}

// The limits of subscriptions, MaxEventSubscriptions and
// MaxEventURLBytes, are in limits.go.

// EventSubscription is a site's subscription: events of EventTypes (all
// when empty) are posted to URL.
type EventSubscription struct {
	ID           string    `json:"eventSubscriptionId"`
	SiteID       string    `json:"siteId"`
	URL          string    `json:"url"`
	EventTypes   []string  `json:"eventTypes,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId"`
}

// Event is one outbox entry: the CloudEvent and the targets still to
// take it ("sub:<subscriptionId>", "bus:<eventBusName>").
type Event struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Site    string          `json:"site"`
	Subject string          `json:"subject"`
	Time    time.Time       `json:"time"`
	Data    json.RawMessage `json:"data"`
	Targets []string        `json:"targets"`
	// Key is the outbox key (not stored): OpEventsDelivered names it.
	Key string `json:"-"`
}

// CloudEvent renders e in CloudEvents 1.0 structured JSON mode.
func (e *Event) CloudEvent() ([]byte, error) {
	return json.Marshal(map[string]any{
		"specversion": "1.0", "id": e.ID, "source": "quire/" + e.Site, "type": e.Type,
		"subject": e.Subject, "time": e.Time.UTC().Format(time.RFC3339Nano),
		"datacontenttype": "application/json", "data": e.Data,
	})
}

const eventBusesKey = pfxEventBuses + "names"

func eventSubKey(site, id string) []byte { return []byte(pfxEventSub + sk(site) + "/" + id) }
func eventSubPrefix(site string) []byte  { return []byte(pfxEventSub + sk(site) + "/") }
func eventKey(at time.Time, site, subject string, n int) []byte {
	return []byte(fmt.Sprintf("%s%s/%s/%s/%04x", pfxEventOut, tsHex(at), sk(site), subject, n))
}

// CheckEventURL checks a subscription's url: http or https with a host,
// at most MaxEventURLBytes, printable.
func CheckEventURL(u string) error {
	if u == "" {
		return Invalid("url", "'url' is required")
	}
	if err := CheckText("url", u, MaxEventURLBytes); err != nil {
		return limitsErr(err)
	}
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil {
		return Invalid("url", "'url' must be an http:// or https:// URL without user information")
	}
	return nil
}

// checkEventTypes refuses unknown types and returns them without
// duplicates, sorted.
func checkEventTypes(ts []string) ([]string, error) {
	var out []string
	for _, ty := range ts {
		if !slices.Contains(EventTypes, ty) {
			return nil, Invalid("eventTypes", fmt.Sprintf("invalid event type '%s': use %s", ty, strings.Join(EventTypes, ", ")))
		}
		if !slices.Contains(out, ty) {
			out = append(out, ty)
		}
	}
	sort.Strings(out)
	return out, nil
}

// PutEventSubscription is the payload of OpPutEventSubscription: Create
// adds ID (refused when the site holds MaxEventSubscriptions), otherwise
// ID's url and types are replaced.
type PutEventSubscription struct {
	ID         string   `json:"eventSubscriptionId"`
	Create     bool     `json:"create,omitempty"`
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes,omitempty"`
}

func applyPutEventSubscription(t *tx, c *Command) (any, error) {
	p, err := decode[PutEventSubscription](c)
	if err != nil {
		return nil, err
	}
	if err := checkName("eventSubscriptionId", p.ID); err != nil || p.ID == "" || strings.Contains(p.ID, "/") {
		return nil, Invalid("eventSubscriptionId", "invalid 'eventSubscriptionId'")
	}
	if err := CheckEventURL(p.URL); err != nil {
		return nil, err
	}
	types, err := checkEventTypes(p.EventTypes)
	if err != nil {
		return nil, err
	}
	k := eventSubKey(c.Site, p.ID)
	var s EventSubscription
	switch err := t.getJSON(k, &s); {
	case err == nil && p.Create:
		return nil, Invalid("eventSubscriptionId", fmt.Sprintf("event subscription '%s' already exists", p.ID))
	case errors.Is(err, ErrNotFound) && !p.Create:
		return nil, &NotFoundError{Msg: fmt.Sprintf("Event subscription '%s' not found", p.ID)}
	case errors.Is(err, ErrNotFound):
		if t.count(eventSubPrefix(c.Site)) >= MaxEventSubscriptions {
			return nil, Invalid("url", fmt.Sprintf("a site holds at most %d event subscriptions", MaxEventSubscriptions))
		}
		s = EventSubscription{ID: p.ID, SiteID: c.Site, InsertedDate: c.At, UserID: c.User}
	case err != nil:
		return nil, err
	}
	s.URL, s.EventTypes = p.URL, types
	return nil, t.setJSON(k, s)
}

// DeleteEventSubscription is the payload of OpDeleteEventSubscription.
// Events already written for it are dropped by the worker when it finds
// the subscription gone.
type DeleteEventSubscription struct {
	ID string `json:"eventSubscriptionId"`
}

func applyDeleteEventSubscription(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteEventSubscription](c)
	if err != nil {
		return nil, err
	}
	k := eventSubKey(c.Site, p.ID)
	if ok, err := t.exists(k); err != nil {
		return nil, err
	} else if !ok || p.ID == "" {
		return nil, &NotFoundError{Msg: fmt.Sprintf("Event subscription '%s' not found", p.ID)}
	}
	return nil, t.del(k)
}

// SetEventBuses is the payload of OpSetEventBuses: the names of the
// event buses events go to (the leader's configuration, registered when
// it starts delivering).
type SetEventBuses struct {
	Names []string `json:"names"`
}

func applySetEventBuses(t *tx, c *Command) (any, error) {
	p, err := decode[SetEventBuses](c)
	if err != nil {
		return nil, err
	}
	names := slices.Clone(p.Names)
	sort.Strings(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil, t.del([]byte(eventBusesKey))
	}
	return nil, t.setJSON([]byte(eventBusesKey), names)
}

// EventDelivery names an event and a target that took it (or that is
// given up: the subscription is gone, the destination refused, the event
// too old).
type EventDelivery struct {
	Key    string `json:"key"`
	Target string `json:"target"`
}

// EventsDelivered is the payload of OpEventsDelivered.
type EventsDelivered struct {
	Items []EventDelivery `json:"items"`
}

// MaxEventsDelivered bounds one OpEventsDelivered.
const MaxEventsDelivered = 256

func applyEventsDelivered(t *tx, c *Command) (any, error) {
	p, err := decode[EventsDelivered](c)
	if err != nil {
		return nil, err
	}
	if len(p.Items) > MaxEventsDelivered {
		return nil, Invalid("items", fmt.Sprintf("at most %d deliveries at once", MaxEventsDelivered))
	}
	for _, it := range p.Items {
		if !strings.HasPrefix(it.Key, pfxEventOut) {
			return nil, Invalid("key", "not an event key")
		}
		var e Event
		if err := t.getJSON([]byte(it.Key), &e); errors.Is(err, ErrNotFound) {
			continue // recorded already (a delivery recorded twice)
		} else if err != nil {
			return nil, err
		}
		i := slices.Index(e.Targets, it.Target)
		if i < 0 {
			continue
		}
		e.Targets = slices.Delete(e.Targets, i, i+1)
		if len(e.Targets) == 0 {
			err = t.del([]byte(it.Key))
		} else {
			err = t.setJSON([]byte(it.Key), e)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// eventTargets are the targets an event of typ in site goes to now.
func eventTargets(t *tx, site, typ string) ([]string, error) {
	var out []string
	err := t.scanCached(eventSubPrefix(site), func(_, v []byte) error {
		var s EventSubscription
		if err := json.Unmarshal(v, &s); err != nil {
			return err
		}
		if len(s.EventTypes) == 0 || slices.Contains(s.EventTypes, typ) {
			out = append(out, "sub:"+s.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var buses []string
	if err := t.getJSON([]byte(eventBusesKey), &buses); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	for _, b := range buses {
		out = append(out, "bus:"+b)
	}
	return out, nil
}

// emitEvent writes an event of typ about subject (a document id) of site
// to the outbox, when it has a target. Its id is derived from its key,
// which the command decides (its time, site, subject): the same on
// every replay.
func emitEvent(t *tx, c *Command, site, subject, typ string, data map[string]any) error {
	targets, err := eventTargets(t, site, typ)
	if err != nil || len(targets) == 0 {
		return err
	}
	var k []byte
	for n := 0; ; n++ {
		k = eventKey(c.At, site, subject, n)
		ok, err := t.exists(k)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(k)
	h := hex.EncodeToString(sum[:16])
	id := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
	t.events++
	return t.setJSON(k, Event{ID: id, Type: typ, Site: site, Subject: subject, Time: c.At, Data: raw, Targets: targets})
}

// activityEvent writes the event of a trail entry: created, deleted
// (soft or hard) or updated.
func activityEvent(t *tx, c *Command, site string, a *Activity, d *Document) error {
	typ := EventUpdated
	switch a.Type {
	case ActivityCreate:
		typ = EventCreated
	case ActivityDelete, ActivitySoftDelete:
		typ = EventDeleted
	}
	data := map[string]any{"siteId": site, "documentId": a.DocumentID, "path": a.Path, "activity": a.Type,
		"userId": a.UserID, "source": a.Source}
	if a.ArtifactID != "" {
		data["artifactId"] = a.ArtifactID
	}
	if len(a.Changed) > 0 {
		data["changed"] = a.Changed
	}
	if d != nil && a.Type != ActivityDelete {
		if d.ContentType != "" {
			data["contentType"] = d.ContentType
		}
		if d.HasContent {
			data["contentLength"] = d.ContentLength
		}
	}
	return emitEvent(t, c, site, a.DocumentID, typ, data)
}

// actionEvents writes the events of an action that finished: action
// completed, and a malware scan result for an antivirus action.
func actionEvents(t *tx, c *Command, d *Document, a *Action, p *FinishAction) error {
	data := map[string]any{"siteId": c.Site, "documentId": d.DocumentID, "path": d.Path,
		"actionType": a.Type, "actionStatus": a.Status, "userId": a.UserID}
	if a.Message != "" {
		data["message"] = a.Message
	}
	if err := emitEvent(t, c, c.Site, d.DocumentID, EventActionCompleted, data); err != nil {
		return err
	}
	if st := p.Metadata["scanStatus"]; st != "" && (a.Type == "ANTIVIRUS" || a.Type == "MALWARE_SCAN") {
		return emitEvent(t, c, c.Site, d.DocumentID, EventMalwareScan, map[string]any{"siteId": c.Site,
			"documentId": d.DocumentID, "path": d.Path, "scanStatus": st, "scanMessage": p.Message})
	}
	return nil
}

// EventSubscriptions lists a site's subscriptions by id.
func (d *DB) EventSubscriptions(site string) ([]EventSubscription, error) {
	var out []EventSubscription
	err := d.view(func(t *tx) error {
		return t.each(eventSubPrefix(site), func(_, v []byte) error {
			var s EventSubscription
			if err := json.Unmarshal(v, &s); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	})
	return out, err
}

// GetEventSubscription reads one subscription of a site.
func (d *DB) GetEventSubscription(site, id string) (*EventSubscription, error) {
	var s EventSubscription
	err := d.view(func(t *tx) error { return t.getJSON(eventSubKey(site, id), &s) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("Event subscription '%s' not found", id)}
	}
	return &s, err
}

// EventBuses returns the registered event bus names.
func (d *DB) EventBuses() ([]string, error) {
	var names []string
	err := d.view(func(t *tx) error { return t.getJSON([]byte(eventBusesKey), &names) })
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return names, err
}

// PendingEvents calls fn for outbox events, oldest first, reading at most
// scan entries; fn returns false to stop.
func (d *DB) PendingEvents(scan int, fn func(*Event) bool) error {
	return d.view(func(t *tx) error {
		n := 0
		stop := errors.New("stop")
		err := t.each([]byte(pfxEventOut), func(k, v []byte) error {
			if n++; n > scan {
				return stop
			}
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			e.Key = string(k)
			if !fn(&e) {
				return stop
			}
			return nil
		})
		if err == stop {
			err = nil
		}
		return err
	})
}
