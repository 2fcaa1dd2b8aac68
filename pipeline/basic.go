package pipeline

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"quire/pipeline/engine"
	"quire/pipeline/webhook"
	"quire/storage"
)

// runPublish publishes the document's current content at
// /publications/{documentId}.
func runPublish(ctx context.Context, j *Job) (*Outcome, error) {
	if !j.Doc.HasContent {
		return nil, errors.New("the document has no content to publish")
	}
	c, err := j.command(storage.OpPublish, storage.DocumentRef{DocumentID: j.Doc.DocumentID})
	if err != nil {
		return nil, err
	}
	return &Outcome{Then: []*storage.Command{c}, Metadata: map[string]string{"contentSha256": j.Doc.ContentSHA256}}, nil
}

// runQueue puts the document into the action's queue, where it waits
// (IN_QUEUE) for a person's decision; the actions after it wait too.
func runQueue(ctx context.Context, j *Job) (*Outcome, error) {
	c, err := j.command(storage.OpQueueDocument, storage.QueueDocument{QueueID: j.Action.QueueID, DocumentID: j.Doc.DocumentID, Seq: j.Action.Seq, Retry: j.Action.Retry})
	if err != nil {
		return nil, err
	}
	return &Outcome{Status: storage.ActionInQueue, Then: []*storage.Command{c}}, nil
}

// runChecksum hashes the content and stores the checksum on the document.
func runChecksum(ctx context.Context, j *Job) (*Outcome, error) {
	typ := strings.ToUpper(j.Param("checksumType"))
	var h hash.Hash
	switch typ {
	case "SHA1":
		h = sha1.New()
	case "SHA256":
		h = sha256.New()
	case "SHA512":
		h = sha512.New()
	default:
		return nil, fmt.Errorf("invalid checksumType '%s'", typ)
	}
	rc, err := j.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if _, err := io.Copy(h, engine.ContextReader(ctx, rc)); err != nil {
		return nil, err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	c, err := j.command(storage.OpUpdateDocument, storage.UpdateDocument{DocumentID: j.Doc.DocumentID, Checksum: &sum, ChecksumType: &typ})
	if err != nil {
		return nil, err
	}
	return &Outcome{Then: []*storage.Command{c}, Metadata: map[string]string{"checksum": sum}}, nil
}

// runMove moves the document into the folder given by path (ending in
// "/"). A document of the same name there is not overwritten: the moved one
// gets FormKiQ's "name (documentId).ext".
func runMove(ctx context.Context, j *Job) (*Outcome, error) {
	if !strings.HasSuffix(j.Param("path"), "/") {
		return nil, errors.New("'path' must end with '/'")
	}
	if err := j.checkRights(); err != nil {
		return nil, err
	}
	np := storage.MoveActionPath(j.Param("path"), j.Doc.Path, j.Doc.DocumentID)
	if np == j.Doc.Path {
		return &Outcome{Status: storage.ActionSkipped, Message: "the document is already in " + j.Param("path")}, nil
	}
	c, err := j.command(storage.OpUpdateDocument, storage.UpdateDocument{DocumentID: j.Doc.DocumentID, Path: &np})
	if err != nil {
		return nil, err
	}
	return &Outcome{Then: []*storage.Command{c}}, nil
}

// runDelete deletes the document: SOFT_DELETE moves it to the trash,
// HARD_DELETE and PURGE remove it with its content.
func runDelete(ctx context.Context, j *Job) (*Outcome, error) {
	if err := j.checkRights(); err != nil {
		return nil, err
	}
	ref := storage.DocumentRef{DocumentID: j.Doc.DocumentID}
	var op storage.Op
	switch strings.ToUpper(j.Param("deleteType")) {
	case "SOFT_DELETE":
		op = storage.OpSoftDelete
	case "HARD_DELETE", "PURGE":
		op = storage.OpDeleteDocument
	default:
		return nil, fmt.Errorf("invalid deleteType '%s'", j.Param("deleteType"))
	}
	c, err := j.command(op, ref)
	if err != nil {
		return nil, err
	}
	return &Outcome{Then: []*storage.Command{c}}, nil
}

// documentEvent is the document as webhooks and events carry it, with a
// download URL valid for a day.
func (j *Job) documentEvent() map[string]any {
	var doc map[string]any
	if j.p.cfg.Describe != nil {
		doc = j.p.cfg.Describe(j.Doc)
	} else {
		doc = map[string]any{"siteId": j.Site, "documentId": j.Doc.DocumentID, "path": j.Doc.Path}
	}
	if j.Doc.HasContent && j.p.cfg.DownloadURL != nil {
		doc["url"] = j.p.cfg.DownloadURL(j.Site, j.Doc.DocumentID, 24*time.Hour)
	}
	return doc
}

// post sends body to url, signed when a secret is configured: the
// X-Quire-Timestamp header holds the Unix time and X-Quire-Signature
// "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)). A network
// error, 408, 429 or 5xx is retried; another status, or a destination the
// outbound policy refuses, fails the action. The error says what happened
// in a few words and never carries what the receiver sent.
func (j *Job) post(ctx context.Context, client *http.Client, url, contentType string, body []byte) (int, error) {
	return j.p.post(ctx, client, url, contentType, body)
}

// post is Job.post, for the event delivery too.
func (p *Pipeline) post(ctx context.Context, client *http.Client, url, contentType string, body []byte) (int, error) {
	return webhook.Post(ctx, client, url, contentType, body, p.cfg.Engines.WebhookSecret, p.cfg.Now)
}

// runWebhook posts the document to the action's url.
func runWebhook(ctx context.Context, j *Job) (*Outcome, error) {
	body, err := json.Marshal(map[string]any{"documents": []any{j.documentEvent()}})
	if err != nil {
		return nil, err
	}
	code, err := j.post(ctx, j.p.userHTTP, j.Param("url"), "application/json", body)
	if err != nil {
		return nil, err
	}
	return &Outcome{Metadata: map[string]string{"responseStatus": strconv.Itoa(code)}}, nil
}

// runEventBus posts a CloudEvents 1.0 event (structured JSON) about the
// document to the endpoint configured for eventBusName.
func runEventBus(ctx context.Context, j *Job) (*Outcome, error) {
	name := j.Param("eventBusName")
	url := j.p.cfg.Engines.EventBuses[name]
	if url == "" {
		return nil, fmt.Errorf("event bus '%s' is not configured", name)
	}
	ev := map[string]any{
		"specversion":     "1.0",
		"id":              uuid.NewString(),
		"source":          "quire/" + j.Site,
		"type":            "quire.document.action",
		"subject":         j.Doc.DocumentID,
		"time":            j.Now().UTC().Format(time.RFC3339),
		"datacontenttype": "application/json",
		"data":            map[string]any{"eventBusName": name, "document": j.documentEvent()},
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	if _, err := j.post(ctx, webhook.BusClient, url, "application/cloudevents+json", body); err != nil {
		return nil, err
	}
	return &Outcome{Metadata: map[string]string{"eventId": ev["id"].(string)}}, nil
}
