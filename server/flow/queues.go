package flow

import (
	"net/http"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// HandleAddQueue serves POST /queues.
func (s *Handlers) HandleAddQueue(r *api.Request) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return api.Invalid("name", "'name' is required")
	}
	q := storage.Queue{QueueID: r.NewID(), Name: in.Name}
	if _, err := s.Apply(r, storage.OpAddQueue, q); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"queueId": q.QueueID})
}

func queueJSON(q *storage.Queue) map[string]any {
	return map[string]any{"queueId": q.QueueID, "name": q.Name, "insertedDate": api.FormatDate(q.InsertedDate), "userId": q.UserID}
}

// HandleGetQueues serves GET /queues.
func (s *Handlers) HandleGetQueues(r *api.Request) error {
	return api.KeyPage(r, "qu", "queues", func(after string, limit int) ([]storage.Queue, string, error) {
		return s.DB.Queues(r.Site, after, limit)
	}, queueJSON)
}

// HandleGetQueue serves GET /queues/{queueId}.
func (s *Handlers) HandleGetQueue(r *api.Request) error {
	q, err := s.DB.GetQueue(r.Site, api.PathParam(r, "queueId"))
	if err != nil {
		return err
	}
	return r.JSON(queueJSON(q))
}

// HandleDeleteQueue serves DELETE /queues/{queueId}.
func (s *Handlers) HandleDeleteQueue(r *api.Request) error {
	if _, err := s.Apply(r, storage.OpDeleteQueue, storage.Queue{QueueID: api.PathParam(r, "queueId")}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Queue deleted"})
}

// HandleGetQueueDocuments serves GET /queues/{queueId}/documents: the
// documents a QUEUE action put there (FormKiQ's WorkflowDocument).
func (s *Handlers) HandleGetQueueDocuments(r *api.Request) error {
	id := api.PathParam(r, "queueId")
	if _, err := s.DB.GetQueue(r.Site, id); err != nil {
		return err
	}
	return api.KeyPage(r, "qd", "documents", func(after string, limit int) ([]storage.QueuedDocument, string, error) {
		return s.DB.QueueDocuments(r.Site, id, after, limit)
	}, func(q *storage.QueuedDocument) map[string]any {
		d, err := s.DB.GetDocument(r.Site, q.DocumentID)
		if err != nil || !s.DocAllows(r, d.Path, storage.FolderRead) {
			return nil // gone or out of reach: left out of the page
		}
		// FormKiQ's WorkflowDocument ({document, workflow}); the
		// document's fields stay at the top level too (Quire's earlier
		// shape, API.md).
		m := api.DocumentJSON(d)
		m["document"] = api.DocumentJSON(d)
		if a, err := s.DB.GetAction(r.Site, storage.ActionRef{DocumentID: q.DocumentID, Seq: q.Seq, Retry: q.Retry}); err == nil && a.WorkflowID != "" {
			if w, err := s.DB.GetWorkflow(r.Site, a.WorkflowID); err == nil {
				m["workflow"] = s.workflowSummary(r.Site, w)
			}
		}
		m["queueId"] = q.QueueID
		m["queueInsertedDate"] = api.FormatDate(q.InsertedDate)
		return m
	})
}

// HandleQueueDecision serves POST /queues/{queueId}/documents/{documentId}/decisions
// (Quire): {"decision":"APPROVE"|"REJECT","comments"}. It is an alias of
// the workflow decision route for a document a workflow step put in the
// queue (the same applier decides, API.md "Workflows"); for a QUEUE
// action added on its own, approval completes the action (ASYNC_COMPLETE)
// and its next actions run, rejection fails it.
func (s *Handlers) HandleQueueDecision(r *api.Request) error {
	decision, comments, err := s.readDecision(r)
	if err != nil {
		return err
	}
	qid := api.PathParam(r, "queueId")
	if _, err := s.DB.GetQueue(r.Site, qid); err != nil {
		return err
	}
	d := storage.QueueDecision{QueueID: qid, DocumentID: r.DocID(), Decision: decision, Comments: comments, Decider: s.ActorOf(r)}
	if _, err := s.Apply(r, storage.OpQueueDecision, d); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Decision saved"})
}
