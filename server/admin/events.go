package admin

import (
	"errors"
	"fmt"
	"net/http"

	"quire/server/internal/api"
	"quire/storage"
)

// Event subscriptions (SERVICE-SPEC.md §6; API.md "Document events"):
// FormKiQ 1.19.1 has no route for them, so Quire's own, in FormKiQ's
// style, under /sites/{siteId}/eventSubscriptions, for site governors.
// The events themselves are written by storage and delivered by the
// pipeline (storage/events.go, pipeline/events.go).

// eventSubIn is the body of POST and PATCH.
type eventSubIn struct {
	URL        *string  `json:"url"`
	EventTypes []string `json:"eventTypes"`
}

// readEventSub validates a subscription body; old is the stored one a
// PATCH changes (nil for POST).
func (s *Handlers) readEventSub(r *api.Request, old *storage.EventSubscription) (storage.PutEventSubscription, error) {
	var in eventSubIn
	if err := r.ReadBody(&in, 16<<10); err != nil {
		return storage.PutEventSubscription{}, err
	}
	var p storage.PutEventSubscription
	if old != nil {
		p.URL, p.EventTypes = old.URL, old.EventTypes
	}
	var errs []storage.ValidationItem
	add := func(err error) {
		var ve *storage.ValidationError
		if errors.As(err, &ve) {
			errs = append(errs, ve.Items...)
		} else if err != nil {
			errs = append(errs, storage.ValidationItem{Key: "url", Msg: err.Error()})
		}
	}
	if in.URL != nil || old == nil {
		u := ""
		if in.URL != nil {
			u = *in.URL
		}
		p.URL = u
		if err := storage.CheckEventURL(u); err != nil {
			add(err)
		} else if s.Dest != nil {
			if err := s.Dest.CheckWebhookURL(u); err != nil {
				add(storage.Invalid("url", fmt.Sprintf("'url' is not allowed: %v", err)))
			}
		}
	}
	if in.EventTypes != nil {
		p.EventTypes = in.EventTypes
		for _, ty := range in.EventTypes {
			if !contains(storage.EventTypes, ty) {
				add(storage.Invalid("eventTypes", fmt.Sprintf("invalid event type '%s'", ty)))
				break
			}
		}
	}
	return p, api.CheckErrors(errs)
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

func eventSubJSON(e *storage.EventSubscription) map[string]any {
	types := e.EventTypes
	if len(types) == 0 {
		types = storage.EventTypes
	}
	return map[string]any{"eventSubscriptionId": e.ID, "siteId": e.SiteID, "url": e.URL, "eventTypes": types,
		"insertedDate": api.FormatDate(e.InsertedDate), "userId": e.UserID}
}

// HandleGetEventSubs serves GET /sites/{siteId}/eventSubscriptions: one
// page (a site holds at most storage.MaxEventSubscriptions).
func (s *Handlers) HandleGetEventSubs(r *api.Request) error {
	subs, err := s.DB.EventSubscriptions(r.Site)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(subs))
	for i := range subs {
		out = append(out, eventSubJSON(&subs[i]))
	}
	return r.JSON(map[string]any{"eventSubscriptions": out})
}

// HandleAddEventSub serves POST /sites/{siteId}/eventSubscriptions
// {url, eventTypes}: 201 {"eventSubscriptionId"}.
func (s *Handlers) HandleAddEventSub(r *api.Request) error {
	p, err := s.readEventSub(r, nil)
	if err != nil {
		return err
	}
	p.ID, p.Create = r.NewID(), true
	if _, err := s.Apply(r, storage.OpPutEventSubscription, p); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"eventSubscriptionId": p.ID, "siteId": r.Site})
}

// HandleGetEventSub serves GET /sites/{siteId}/eventSubscriptions/{eventSubscriptionId}.
func (s *Handlers) HandleGetEventSub(r *api.Request) error {
	e, err := s.DB.GetEventSubscription(r.Site, api.PathParam(r, "eventSubscriptionId"))
	if err != nil {
		return err
	}
	return r.JSON(eventSubJSON(e))
}

// HandleUpdateEventSub serves PATCH /sites/{siteId}/eventSubscriptions/{eventSubscriptionId}.
func (s *Handlers) HandleUpdateEventSub(r *api.Request) error {
	id := api.PathParam(r, "eventSubscriptionId")
	old, err := s.DB.GetEventSubscription(r.Site, id)
	if err != nil {
		return err
	}
	p, err := s.readEventSub(r, old)
	if err != nil {
		return err
	}
	p.ID = id
	if _, err := s.Apply(r, storage.OpPutEventSubscription, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object updated", id)})
}

// HandleDeleteEventSub serves DELETE /sites/{siteId}/eventSubscriptions/{eventSubscriptionId}.
func (s *Handlers) HandleDeleteEventSub(r *api.Request) error {
	id := api.PathParam(r, "eventSubscriptionId")
	if _, err := s.Apply(r, storage.OpDeleteEventSubscription, storage.DeleteEventSubscription{ID: id}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("'%s' object deleted", id)})
}
