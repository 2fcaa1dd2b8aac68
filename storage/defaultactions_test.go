package storage

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// actionSummary is "TYPE STATUS" of each of a document's actions, with
// "*" after the ones marked Default.
func actionSummary(t *testing.T, d *DB, id string) []string {
	t.Helper()
	acts, err := d.GetActions("default", id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range acts {
		s := a.Type + " " + a.Status
		if a.Default {
			s += "*"
		}
		out = append(out, s)
	}
	return out
}

// newDocWith is a NewDocument of id with content b of type ct (ct ""
// with detect: its type is to be detected).
func newDocWith(t *testing.T, id, ct string, b []byte) NewDocument {
	t.Helper()
	m, chunks, ok := SmallContent(b)
	if !ok {
		t.Fatalf("%d bytes are no small content", len(b))
	}
	return NewDocument{Document: Document{DocumentID: id, Path: id, ContentType: ct}, Content: &m, Chunks: chunks, DefaultActions: true}
}

// TestDefaultActions_DecidedByContentType (issue 46): the site's defaults
// (OCR, FULLTEXT) are decided in the transaction that makes a document's
// content type known. Text: no OCR, FULLTEXT COMPLETE with a text record
// as the pipeline writes it; Office: FULLTEXT for the pipeline; image and
// PDF: both for the pipeline; named actions as they are.
func TestDefaultActions_DecidedByContentType(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	at := t0
	next := func() time.Time { at = at.Add(time.Second); return at }
	add := func(t *testing.T, nd NewDocument) string {
		t.Helper()
		mustApply(t, d, OpAddDocuments, "default", next(), AddDocuments{Docs: []NewDocument{nd}})
		return nd.Document.DocumentID
	}
	docx := "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	for _, tt := range []struct {
		name string
		nd   func(t *testing.T, id string) NewDocument
		then func(t *testing.T, id string) // a later write (nil: none)
		want []string
		text string // the FULLTEXT record's text ("" : none)
	}{
		{"text", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "text/plain", []byte("Grüße, zebracorn"))
		},
			nil, []string{"FULLTEXT COMPLETE*"}, "Grüße, zebracorn"},
		{"text with a charset", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "text/markdown; charset=utf-8", []byte("# note"))
		}, nil, []string{"FULLTEXT COMPLETE*"}, "# note"},
		{"text that is not UTF-8", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "text/plain", []byte("caf\xe9 au lait"))
		}, nil, []string{"FULLTEXT COMPLETE*"}, "caf au lait"},
		{"text of more than one chunk", func(t *testing.T, id string) NewDocument {
			b := bytes.Repeat([]byte("long "), ChunkSize/5+1)
			m, chunks, err := WriteContent(t.Context(), d, bytes.NewReader(b), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			return NewDocument{Document: Document{DocumentID: id, Path: id, ContentType: "text/plain"}, Content: &m, Chunks: chunks, DefaultActions: true}
		}, nil, []string{"FULLTEXT PENDING*"}, ""},
		{"short text in two chunks", func(t *testing.T, id string) NewDocument {
			// Content of one chunk is read as that chunk; this one has no
			// chunk of its own hash and is read through its manifest.
			a, b := EncodeChunk([]byte("two chunks, ")), EncodeChunk([]byte("one text"))
			sum := sha256.Sum256([]byte("two chunks, one text"))
			m := Manifest{SHA256: hex.EncodeToString(sum[:]), Size: a.Size + b.Size, Chunks: []ChunkRef{{SHA: a.SHA, Size: a.Size}, {SHA: b.SHA, Size: b.Size}}}
			return NewDocument{Document: Document{DocumentID: id, Path: id, ContentType: "text/plain"}, Content: &m, Chunks: []Chunk{a, b}, DefaultActions: true}
		}, nil, []string{"FULLTEXT COMPLETE*"}, "two chunks, one text"},
		{"office", func(t *testing.T, id string) NewDocument { return newDocWith(t, id, docx, []byte("PK\x03\x04")) },
			nil, []string{"FULLTEXT PENDING*"}, ""},
		{"PNG", func(t *testing.T, id string) NewDocument { return newDocWith(t, id, "image/png", []byte("\x89PNG")) },
			nil, []string{"OCR PENDING*", "FULLTEXT PENDING*"}, ""},
		{"TIFF", func(t *testing.T, id string) NewDocument { return newDocWith(t, id, "image/tiff", []byte("II*\x00")) },
			nil, []string{"OCR PENDING*", "FULLTEXT PENDING*"}, ""},
		{"PDF", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "application/pdf", []byte("%PDF-1.4"))
		},
			nil, []string{"OCR PENDING*", "FULLTEXT PENDING*"}, ""},
		{"OCR named on text", func(t *testing.T, id string) NewDocument {
			nd := newDocWith(t, id, "text/plain", []byte("typed"))
			nd.Actions, nd.DefaultActions = []Action{{Type: "OCR"}}, false
			return nd
		}, nil, []string{"OCR PENDING"}, ""},
		{"FULLTEXT named on text", func(t *testing.T, id string) NewDocument {
			nd := newDocWith(t, id, "text/plain", []byte("typed"))
			nd.Actions, nd.DefaultActions = []Action{{Type: "FULLTEXT"}}, false
			return nd
		}, nil, []string{"FULLTEXT PENDING"}, ""},
		{"upload URL, then text content", func(t *testing.T, id string) NewDocument {
			return NewDocument{Document: Document{DocumentID: id, Path: id}, DefaultActions: true}
		}, func(t *testing.T, id string) {
			m, chunks, _ := SmallContent([]byte("uploaded words"))
			mustApply(t, d, OpCommitContent, "default", next(), CommitContent{DocumentID: id, Content: m, Chunks: chunks, ContentType: "text/plain"})
		}, []string{"FULLTEXT COMPLETE*"}, "uploaded words"},
		{"upload URL, then content of a detected type", func(t *testing.T, id string) NewDocument {
			return NewDocument{Document: Document{DocumentID: id, Path: id}, DefaultActions: true}
		}, func(t *testing.T, id string) {
			m, chunks, _ := SmallContent([]byte("PK\x03\x04 office"))
			mustApply(t, d, OpCommitContent, "default", next(), CommitContent{DocumentID: id, Content: m, Chunks: chunks})
			if got := actionSummary(t, d, id); !slices.Equal(got, []string{"OCR PENDING*", "FULLTEXT PENDING*"}) {
				t.Errorf("before detection: %v", got)
			}
			mustApply(t, d, OpSetContentType, "default", next(), SetContentType{DocumentID: id, ContentSHA: m.SHA256, ContentType: docx})
		}, []string{"FULLTEXT PENDING*"}, ""},
		{"PDF, then a text version before its actions ran", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "application/pdf", []byte("%PDF-1.4"))
		}, func(t *testing.T, id string) {
			m, chunks, _ := SmallContent([]byte("now typed"))
			ct := "text/plain"
			mustApply(t, d, OpUpdateDocument, "default", next(), UpdateDocument{DocumentID: id, Content: &m, Chunks: chunks, ContentType: &ct, DefaultActions: true})
		}, []string{"FULLTEXT COMPLETE*"}, "now typed"},
		{"text, then a PDF version", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "text/plain", []byte("first typed"))
		}, func(t *testing.T, id string) {
			m, chunks, _ := SmallContent([]byte("%PDF-1.4 scan"))
			ct := "application/pdf"
			mustApply(t, d, OpUpdateDocument, "default", next(), UpdateDocument{DocumentID: id, Content: &m, Chunks: chunks, ContentType: &ct, DefaultActions: true})
		}, []string{"FULLTEXT COMPLETE*", "OCR PENDING*", "FULLTEXT PENDING*"}, ""},
		{"text, then a text version", func(t *testing.T, id string) NewDocument {
			return newDocWith(t, id, "text/plain", []byte("first typed"))
		}, func(t *testing.T, id string) {
			m, chunks, _ := SmallContent([]byte("second typed"))
			mustApply(t, d, OpUpdateDocument, "default", next(), UpdateDocument{DocumentID: id, Content: &m, Chunks: chunks, DefaultActions: true})
		}, []string{"FULLTEXT COMPLETE*", "FULLTEXT COMPLETE*"}, "second typed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := "doc-" + strings.ReplaceAll(tt.name, " ", "-")
			add(t, tt.nd(t, id))
			if tt.then != nil {
				tt.then(t, id)
			}
			if got := actionSummary(t, d, id); !slices.Equal(got, tt.want) {
				t.Fatalf("actions %v, want %v", got, tt.want)
			}
			tr, err := d.Text("default", id, TextFulltext)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.text == "" && tr != nil:
				t.Errorf("FULLTEXT text %q of a FULLTEXT not run", tr.Text)
			case tt.text != "" && (tr == nil || tr.Text != tt.text || tr.Engine != TextFromContent):
				t.Errorf("FULLTEXT text %+v, want %q from the content", tr, tt.text)
			}
			acts, err := d.GetActions("default", id)
			if err != nil {
				t.Fatal(err)
			}
			if last := acts[len(acts)-1]; tt.text != "" {
				chars := fmt.Sprint(len([]rune(tt.text)))
				if last.CompletedDate == nil || !last.CompletedDate.Equal(at) || last.Metadata["source"] != "content" || last.Metadata["characters"] != chars {
					t.Errorf("FULLTEXT %+v: want completed at %s, source content, %s characters", last, at, chars)
				}
			}
			queued := false
			if err := d.ActionQueue(func(q QueuedDoc) error { queued = queued || q.ID == id; return nil }); err != nil {
				t.Fatal(err)
			}
			want := slices.ContainsFunc(tt.want, func(s string) bool { return strings.Contains(s, "PENDING") })
			if queued != want {
				t.Errorf("queued for the pipeline: %v, want %v", queued, want)
			}
		})
	}
}

// TestDefaultActions_SettledEventFollowsCreated: the actionCompleted
// event of a FULLTEXT recorded COMPLETE by the create comes after the
// document's created event, and a replay writes the same events.
func TestDefaultActions_SettledEventFollowsCreated(t *testing.T) {
	t.Parallel() // own store, no package or process state
	run := func(d *DB) []Event {
		mustApply(t, d, OpPutEventSubscription, "default", t0, PutEventSubscription{ID: "s1", Create: true, URL: "http://127.0.0.1:9/x",
			EventTypes: []string{EventCreated, EventActionCompleted}})
		mustApply(t, d, OpAddDocuments, "default", t0.Add(time.Second), AddDocuments{Docs: []NewDocument{newDocWith(t, "typed.txt", "text/plain", []byte("typed"))}})
		var evs []Event
		if err := d.PendingEvents(100, func(e *Event) bool { evs = append(evs, *e); return true }); err != nil {
			t.Fatal(err)
		}
		return evs
	}
	a, b := run(mustOpen(t)), run(mustOpen(t))
	if len(a) != 2 || a[0].Type != EventCreated || a[1].Type != EventActionCompleted {
		t.Fatalf("events %+v, want created then actionCompleted", a)
	}
	if !strings.Contains(string(a[1].Data), `"actionType":"FULLTEXT"`) || !strings.Contains(string(a[1].Data), `"actionStatus":"COMPLETE"`) {
		t.Errorf("actionCompleted data %s", a[1].Data)
	}
	for i := range a {
		if len(b) != len(a) || a[i].ID != b[i].ID || a[i].Key != b[i].Key {
			t.Fatalf("a replay wrote other events: %+v / %+v", a, b)
		}
	}
}

// TestDefaultActions_EarlierRulesApplyAsBefore: a log entry of a release
// before RulesDefaultsByType (no "rules" in its JSON) applies as that
// release applied it, on whichever release replays it — a text's OCR and
// FULLTEXT stay PENDING and unmarked, and a later write of the current
// rules does not settle them — while the same create built now is
// decided by its content type.
func TestDefaultActions_EarlierRulesApplyAsBefore(t *testing.T) {
	t.Parallel() // own store, no package or process state
	cmd := func(t *testing.T, nd NewDocument, rules int) *Command {
		t.Helper()
		c := MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{Docs: []NewDocument{nd}})
		c.Rules = rules
		b, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(b, []byte(`"rules":`)); got != (rules != 0) {
			t.Fatalf("encoded command %s: rules field present %v, want %v", b, got, rules != 0)
		}
		dc, err := DecodeCommand(b)
		if err != nil {
			t.Fatal(err)
		}
		if dc.Rules != rules {
			t.Fatalf("decoded rules %d, want %d", dc.Rules, rules)
		}
		return dc
	}
	if c := MustCommand(OpAddDocuments, "default", "joe", t0, AddDocuments{}); c.Rules != Rules {
		t.Fatalf("NewCommand's rules %d, want the current %d", c.Rules, Rules)
	}
	for _, tt := range []struct {
		name  string
		rules int
		want  []string
	}{
		{"an entry of an earlier release", 0, []string{"OCR PENDING", "FULLTEXT PENDING"}},
		{"an entry of the current rules", Rules, []string{"FULLTEXT COMPLETE*"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for replay := 0; replay < 2; replay++ { // the same entry on two stores: the same outcome
				d := mustOpen(t)
				if _, err := d.Apply(t.Context(), cmd(t, newDocWith(t, "note.txt", "text/plain", []byte("zebracorn")), tt.rules)); err != nil {
					t.Fatal(err)
				}
				// A later write of the current rules (a content type set
				// again) leaves an earlier release's defaults alone.
				doc, err := d.GetDocument("default", "note.txt")
				if err != nil {
					t.Fatal(err)
				}
				mustApply(t, d, OpSetContentType, "default", t0.Add(time.Second), SetContentType{DocumentID: "note.txt", ContentSHA: doc.ContentSHA256, ContentType: "text/plain"})
				if got := actionSummary(t, d, "note.txt"); !slices.Equal(got, tt.want) {
					t.Fatalf("store %d: actions %v, want %v", replay, got, tt.want)
				}
			}
		})
	}
}
