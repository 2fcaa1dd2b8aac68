package storage

import (
	"errors"
	"fmt"
	"time"
)

// Queue is a workflow queue: QUEUE actions put documents in it.
type Queue struct {
	QueueID      string    `json:"queueId"`
	Name         string    `json:"name"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId,omitempty"`
}

// QueuedDocument is a document waiting in a queue.
type QueuedDocument struct {
	DocumentID   string    `json:"documentId"`
	QueueID      string    `json:"queueId"`
	Seq          int       `json:"seq"`
	Retry        int       `json:"retry,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

func queueNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Queue '%s' not found", id)}
}

// QueueDocument is the payload of OpQueueDocument: put a document (for
// its QUEUE action) into a queue.
type QueueDocument struct {
	QueueID    string `json:"queueId"`
	DocumentID string `json:"documentId"`
	Seq        int    `json:"seq"`
	Retry      int    `json:"retry,omitempty"`
}

func applyAddQueue(t *tx, c *Command) (any, error) {
	p, err := decode[Queue](c)
	if err != nil {
		return nil, err
	}
	if err := checkName("name", p.Name); err != nil {
		return nil, err
	}
	p.InsertedDate, p.UserID = c.At, c.User
	if err := t.setJSON(queueKey(c.Site, p.QueueID), p); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

func applyDeleteQueue(t *tx, c *Command) (any, error) {
	p, err := decode[Queue](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(queueKey(c.Site, p.QueueID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, queueNotFound(p.QueueID)
	}
	if t.firstKey(queueDocPrefix(c.Site, p.QueueID)) != nil {
		return nil, Invalid("queueId", "queue has documents")
	}
	if wf, err := workflowUsingQueue(t, c.Site, p.QueueID); err != nil {
		return nil, err
	} else if wf != "" {
		return nil, Invalid("queueId", "queue is used by workflow '"+wf+"'")
	}
	return nil, t.del(queueKey(c.Site, p.QueueID))
}

func applyQueueDocument(t *tx, c *Command) (any, error) {
	p, err := decode[QueueDocument](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(queueKey(c.Site, p.QueueID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, Invalid("queueId", "'queueId' does not exist")
	}
	q := QueuedDocument{DocumentID: p.DocumentID, QueueID: p.QueueID, Seq: p.Seq, Retry: p.Retry, InsertedDate: c.At}
	return nil, t.setJSON(queueDocKey(c.Site, p.QueueID, p.DocumentID), q)
}

// removeFromQueues takes a deleted document out of every queue of the
// site (queues: their ids, gathered by the purge, purge.go).
func removeFromQueues(t *tx, site, doc string, queues []string) error {
	for _, id := range queues {
		k := queueDocKey(site, id, doc)
		if ok, err := t.exists(k); err != nil {
			return err
		} else if !ok {
			continue
		}
		if err := t.del(k); err != nil {
			return err
		}
	}
	return nil
}

// GetQueue returns one queue.
func (d *DB) GetQueue(site, id string) (*Queue, error) {
	var q Queue
	err := d.view(func(t *tx) error { return t.getJSON(queueKey(site, id), &q) })
	if errors.Is(err, ErrNotFound) {
		return nil, queueNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &q, nil
}

// Queues lists a site's queues by id after after.
func (d *DB) Queues(site, after string, limit int) ([]Queue, string, error) {
	return listPage(d, queuePrefix(site), after, limit, func(q *Queue) string { return q.QueueID })
}

// QueueDocuments lists the documents in a queue by id after after.
func (d *DB) QueueDocuments(site, queueID, after string, limit int) ([]QueuedDocument, string, error) {
	return listPage(d, queueDocPrefix(site, queueID), after, limit, func(q *QueuedDocument) string { return q.DocumentID })
}

// QueueDecision is the payload of OpQueueDecision: a person's decision on
// a document waiting in a queue (POST /queues/{queueId}/documents/
// {documentId}/decisions, Quire's alias of the workflow decision route).
type QueueDecision struct {
	QueueID    string       `json:"queueId"`
	DocumentID string       `json:"documentId"`
	Decision   string       `json:"decision"` // APPROVE or REJECT
	Comments   string       `json:"comments,omitempty"`
	Decider    *ActionActor `json:"decider,omitempty"`
}

// applyQueueDecision takes the document out of the queue. APPROVE
// completes its QUEUE action (ASYNC_COMPLETE) so the actions after it
// run; REJECT fails it (the chain stops until it is retried), unless the
// action is a workflow step's: then the decision routes the step as on
// the workflow decision route (workflows.go decideQueued).
func applyQueueDecision(t *tx, c *Command) (any, error) {
	p, err := decode[QueueDecision](c)
	if err != nil {
		return nil, err
	}
	var q QueuedDocument
	if err := t.getJSON(queueDocKey(c.Site, p.QueueID, p.DocumentID), &q); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, &NotFoundError{Msg: fmt.Sprintf("Document %s not found in queue '%s'", p.DocumentID, p.QueueID)}
		}
		return nil, err
	}
	d, a, err := loadAction(t, c.Site, ActionRef{DocumentID: p.DocumentID, Seq: q.Seq, Retry: q.Retry})
	if err != nil && !errors.Is(err, ErrActionChanged) {
		return nil, err
	}
	if a == nil || a.Status != ActionInQueue {
		// the action was retried or removed meanwhile
		return nil, t.del(queueDocKey(c.Site, p.QueueID, p.DocumentID))
	}
	if a.WorkflowID != "" {
		return applyWorkflowDecision(t, &Command{Op: OpWorkflowDecision, Site: c.Site, User: c.User, At: c.At, Rules: c.Rules,
			local: WorkflowDecision{DocumentID: p.DocumentID, WorkflowID: a.WorkflowID, Decision: p.Decision, Comments: p.Comments, Decider: p.Decider}})
	}
	return nil, decideQueued(t, c, d, a, p.Decision, p.Comments)
}
