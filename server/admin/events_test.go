package admin_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
	"quire/storage"
)

// cloudEvent is a received event, every CloudEvents attribute Quire sets.
type cloudEvent struct {
	SpecVersion     string         `json:"specversion"`
	ID              string         `json:"id"`
	Source          string         `json:"source"`
	Type            string         `json:"type"`
	Subject         string         `json:"subject"`
	Time            string         `json:"time"`
	DataContentType string         `json:"datacontenttype"`
	Data            map[string]any `json:"data"`
}

// received parses what rc got; a body that is no CloudEvent fails t.
func received(t *testing.T, rc *servertest.Receiver) []cloudEvent {
	t.Helper()
	var out []cloudEvent
	for i, b := range rc.BodiesFrom(0) {
		var ev cloudEvent
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("request %d is no JSON event: %s", i, b)
		}
		out = append(out, ev)
	}
	return out
}

// eventTypesOf lists the types of the events about subject, in arrival
// order, duplicates included.
func eventTypesOf(evs []cloudEvent, subject string) []string {
	var out []string
	for _, e := range evs {
		if e.Subject == subject {
			out = append(out, e.Type)
		}
	}
	return out
}

func hasAll(got []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestEvents_DeliveredPerSite: each site's subscription gets that site's
// document created, updated, action completed and deleted events, as
// CloudEvents; the configured event bus gets both sites'; a receiver that
// failed the first post gets the same event (same id) again; no event of
// one site reaches the other's subscription.
func TestEvents_DeliveredPerSite(t *testing.T) {
	bus := servertest.NewReceiver(t)
	s := servertest.PipelineServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.EventBuses = map[string]string{"office": bus.URL + "/bus"}
	})
	tok := s.Admin()
	recv := map[string]*servertest.Receiver{"default": servertest.NewReceiver(t, http.StatusServiceUnavailable), "finance": servertest.NewReceiver(t)}
	docs := map[string]string{}
	for _, site := range servertest.Sites {
		r := s.Do(http.MethodPost, "/sites/"+servertest.SiteID(site.Query)+"/eventSubscriptions", map[string]any{"url": recv[site.Name].URL + "/hook"}, tok)
		servertest.MustStatus(t, r, http.StatusCreated)
		sub := quiretest.Str(t, r.JSON(t), "eventSubscriptionId")
		g := s.Do(http.MethodGet, "/sites/"+servertest.SiteID(site.Query)+"/eventSubscriptions/"+sub, nil, tok)
		servertest.MustStatus(t, g, http.StatusOK)
		if u := quiretest.Str(t, g.JSON(t), "url"); u != recv[site.Name].URL+"/hook" {
			t.Fatalf("subscription url %q", u)
		}
	}
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid, rc := servertest.SiteID(site.Query), recv[site.Name]
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "events/a.txt", "content": "one", "actions": []map[string]any{{"type": "PUBLISH"}}})
			docs[site.Name] = id
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("actions %v", st)
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+id+site.Query, map[string]any{"path": "events/b.txt"}, tok), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+site.Query, nil, tok), http.StatusOK)
			want := []string{storage.EventCreated, storage.EventActionCompleted, storage.EventUpdated, storage.EventDeleted}
			servertest.WaitFor(t, "the site's events", func() bool { return hasAll(eventTypesOf(received(t, rc), id), want...) })
			for _, e := range received(t, rc) {
				if e.SpecVersion != "1.0" || e.Source != "quire/"+sid || e.ID == "" || e.DataContentType != "application/json" || e.Data["siteId"] != sid {
					t.Fatalf("event of site %s: %+v", sid, e)
				}
				if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
					t.Fatalf("event time %q: %v", e.Time, err)
				}
			}
			for _, e := range received(t, rc) {
				switch {
				case e.Subject != id:
				case e.Type == storage.EventUpdated && e.Data["path"] != "events/b.txt":
					t.Fatalf("updated event %+v", e)
				case e.Type == storage.EventActionCompleted && (e.Data["actionType"] != "PUBLISH" || e.Data["actionStatus"] != "COMPLETE"):
					t.Fatalf("action event %+v", e)
				case e.Type == storage.EventCreated && e.Data["path"] != "events/a.txt":
					t.Fatalf("created event %+v", e)
				}
			}
			if h := rc.HeadersAt(0); h.Get("Content-Type") != "application/cloudevents+json" || !strings.HasPrefix(h.Get("X-Quire-Signature"), "sha256=") {
				t.Fatalf("headers %v", h)
			}
			servertest.WaitFor(t, "the bus's events", func() bool { return hasAll(eventTypesOf(received(t, bus), id), want...) })
		})
	}
	// The default site's receiver answered 503 first: that event came
	// again, with the same id.
	evs := received(t, recv["default"])
	if n := len(evs); n < 2 || evs[1].ID != evs[0].ID {
		t.Fatalf("after a 503 the event was not posted again with its id: %d events, first ids %v", n, ids(evs, 2))
	}
	for site, rc := range recv {
		for _, e := range received(t, rc) {
			for other, id := range docs {
				if other != site && e.Subject == id {
					t.Fatalf("site %s's subscription got an event of %s: %+v", site, other, e)
				}
			}
		}
	}
	m := s.Do(http.MethodGet, "/metrics", nil, tok)
	if !strings.Contains(string(m.Body), "quire_events_delivered_total ") || !strings.Contains(string(m.Body), "quire_events_failed_total ") {
		t.Fatalf("no quire_events_* metrics")
	}
}

func ids(evs []cloudEvent, n int) []string {
	var out []string
	for i := 0; i < n && i < len(evs); i++ {
		out = append(out, evs[i].ID)
	}
	return out
}

// TestEvents_DeliveredAfterRestart: an event its receiver refused while
// the server ran is delivered, with the same id, after the server is
// closed and opened again on the same data directory.
func TestEvents_DeliveredAfterRestart(t *testing.T) {
	var down atomic.Bool
	var tries atomic.Int32
	down.Store(true)
	var mu sync.Mutex
	var got []cloudEvent
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev cloudEvent
		json.Unmarshal(b, &ev)
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		tries.Add(1)
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(rc.Close)
	events := func() []cloudEvent { mu.Lock(); defer mu.Unlock(); return append([]cloudEvent(nil), got...) }
	opts := []quiretest.Option{func(c *quiretest.Config) { c.Pipeline.RetryBase = 50 * time.Millisecond }, quiretest.AllowLoopbackOutbound}
	s := quiretest.NewServer(t, opts...)
	tok := s.Admin()
	servertest.MustStatus(t, s.Do(http.MethodPost, "/sites/default/eventSubscriptions", map[string]any{"url": rc.URL, "eventTypes": []string{storage.EventCreated}}, tok), http.StatusCreated)
	id := servertest.AddDoc(t, s, tok, "", map[string]any{"path": "restart.txt", "content": "x"})
	servertest.WaitFor(t, "a refused post", func() bool { return tries.Load() >= 1 })
	dir := s.DataDir
	s.Close()
	refused := events()
	down.Store(false)
	quiretest.StartServer(t, dir, opts...)
	servertest.WaitFor(t, "the event after the restart", func() bool { return len(events()) > len(refused) })
	all := events()
	last := all[len(all)-1]
	if last.Subject != id || last.Type != storage.EventCreated || last.ID != refused[0].ID {
		t.Fatalf("after the restart %+v, refused before %+v", last, refused[0])
	}
	for _, e := range all {
		if e.Type != storage.EventCreated {
			t.Fatalf("a subscription to created events got %s", e.Type)
		}
	}
}

// TestEvents_SubscriptionInput: bad subscriptions are refused with
// FormKiQ's error shape before anything is written; the per-site limit
// holds; only governors manage subscriptions.
func TestEvents_SubscriptionInput(t *testing.T) {
	s := quiretest.NewServer(t, quiretest.AllowLoopbackOutbound)
	tok := s.Admin()
	base := "/sites/finance/eventSubscriptions"
	for _, tc := range []struct {
		name string
		body any
		key  string
	}{
		{"no url", map[string]any{}, "url"},
		{"not http", map[string]any{"url": "ftp://127.0.0.1/x"}, "url"},
		{"user info", map[string]any{"url": "http://u:p@127.0.0.1/x"}, "url"},
		{"too long", map[string]any{"url": "http://127.0.0.1/" + strings.Repeat("a", storage.MaxEventURLBytes)}, "url"},
		{"metadata address", map[string]any{"url": "http://169.254.169.254/latest"}, "url"},
		{"unknown type", map[string]any{"url": "http://127.0.0.1/x", "eventTypes": []string{"quire.document.read"}}, "eventTypes"},
		{"invalid utf-8", []byte("{\"url\":\"http://127.0.0.1/\xff\"}"), ""},
		{"not json", "{", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, base, tc.body, tok)
			servertest.MustStatus(t, r, http.StatusBadRequest)
			if tc.key != "" {
				if k := quiretest.Item(t, r.JSON(t), "errors", 0)["key"]; k != tc.key {
					t.Fatalf("error key %v, want %s: %s", k, tc.key, r.Body)
				}
			}
		})
	}
	if n := len(quiretest.List(t, s.Do(http.MethodGet, base, nil, tok).JSON(t), "eventSubscriptions")); n != 0 {
		t.Fatalf("%d subscriptions after refusals", n)
	}
	servertest.MustStatus(t, s.Do(http.MethodPost, base, map[string]any{"url": "http://127.0.0.1:9/x"}, s.Token("joe", "finance")), http.StatusUnauthorized)
	var first string
	for i := range storage.MaxEventSubscriptions {
		r := s.Do(http.MethodPost, base, map[string]any{"url": "http://127.0.0.1:9/x"}, s.Token("ann", "finance_govern"))
		servertest.MustStatus(t, r, http.StatusCreated)
		if i == 0 {
			first = quiretest.Str(t, r.JSON(t), "eventSubscriptionId")
		}
	}
	r := s.Do(http.MethodPost, base, map[string]any{"url": "http://127.0.0.1:9/x"}, tok)
	servertest.MustStatus(t, r, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "at most 20 event subscriptions") {
		t.Fatalf("limit answer %s", r.Body)
	}
	// Another site has its own limit and sees none of these.
	if n := len(quiretest.List(t, s.Do(http.MethodGet, "/sites/default/eventSubscriptions", nil, tok).JSON(t), "eventSubscriptions")); n != 0 {
		t.Fatalf("default site lists %d subscriptions of finance", n)
	}
	servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/default/eventSubscriptions/"+first, nil, tok), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodPatch, base+"/"+first, map[string]any{"eventTypes": []string{"nope"}}, tok), http.StatusBadRequest)
	servertest.MustBody(t, s.Do(http.MethodPatch, base+"/"+first, map[string]any{"eventTypes": []string{storage.EventDeleted}}, tok), `{"message":"'`+first+`' object updated"}`)
	if ts := quiretest.List(t, s.Do(http.MethodGet, base+"/"+first, nil, tok).JSON(t), "eventTypes"); len(ts) != 1 || ts[0] != storage.EventDeleted {
		t.Fatalf("types after PATCH %v", ts)
	}
	servertest.MustBody(t, s.Do(http.MethodDelete, base+"/"+first, nil, tok), `{"message":"'`+first+`' object deleted"}`)
	servertest.MustStatus(t, s.Do(http.MethodDelete, base+"/"+first, nil, tok), http.StatusNotFound)
	servertest.MustStatus(t, s.Do(http.MethodPost, base, map[string]any{"url": "http://127.0.0.1:9/x"}, tok), http.StatusCreated)
}
