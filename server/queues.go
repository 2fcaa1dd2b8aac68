package server

import (
	"net/http"
	"strings"

	"quire/storage"
)

// handleAddQueue serves POST /queues.
func (s *Server) handleAddQueue(r *reqCtx) error {
	var in struct {
		Name string `json:"name"`
	}
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		return invalid("name", "'name' is required")
	}
	q := storage.Queue{QueueID: r.newID(), Name: in.Name}
	if _, err := s.apply(r, storage.OpAddQueue, q); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"queueId": q.QueueID})
}

func queueJSON(q *storage.Queue) map[string]any {
	return map[string]any{"queueId": q.QueueID, "name": q.Name, "insertedDate": formatDate(q.InsertedDate), "userId": q.UserID}
}

// handleGetQueues serves GET /queues.
func (s *Server) handleGetQueues(r *reqCtx) error {
	return keyPage(r, "qu", "queues", func(after string, limit int) ([]storage.Queue, string, error) {
		return s.db.Queues(r.site, after, limit)
	}, queueJSON)
}

// handleGetQueue serves GET /queues/{queueId}.
func (s *Server) handleGetQueue(r *reqCtx) error {
	q, err := s.db.GetQueue(r.site, pathParam(r, "queueId"))
	if err != nil {
		return err
	}
	return r.JSON(queueJSON(q))
}

// handleDeleteQueue serves DELETE /queues/{queueId}.
func (s *Server) handleDeleteQueue(r *reqCtx) error {
	if _, err := s.apply(r, storage.OpDeleteQueue, storage.Queue{QueueID: pathParam(r, "queueId")}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Queue deleted"})
}

// handleGetQueueDocuments serves GET /queues/{queueId}/documents: the
// documents a QUEUE action put there (FormKiQ's WorkflowDocument).
func (s *Server) handleGetQueueDocuments(r *reqCtx) error {
	id := pathParam(r, "queueId")
	if _, err := s.db.GetQueue(r.site, id); err != nil {
		return err
	}
	return keyPage(r, "qd", "documents", func(after string, limit int) ([]storage.QueuedDocument, string, error) {
		return s.db.QueueDocuments(r.site, id, after, limit)
	}, func(q *storage.QueuedDocument) map[string]any {
		d, err := s.db.GetDocument(r.site, q.DocumentID)
		if err != nil || !s.docAllows(r, d.Path, storage.FolderRead) {
			return nil // gone or out of reach: left out of the page
		}
		// FormKiQ's WorkflowDocument ({document, workflow}); the
		// document's fields stay at the top level too (Quire's earlier
		// shape, API.md).
		m := documentJSON(d)
		m["document"] = documentJSON(d)
		if a, err := s.db.GetAction(r.site, storage.ActionRef{DocumentID: q.DocumentID, Seq: q.Seq, Retry: q.Retry}); err == nil && a.WorkflowID != "" {
			if w, err := s.db.GetWorkflow(r.site, a.WorkflowID); err == nil {
				m["workflow"] = s.workflowSummary(r.site, w)
			}
		}
		m["queueId"] = q.QueueID
		m["queueInsertedDate"] = formatDate(q.InsertedDate)
		return m
	})
}

func (s *Server) queueExists(site, id string) bool {
	_, err := s.db.GetQueue(site, id)
	return err == nil
}

// handleQueueDecision serves POST /queues/{queueId}/documents/{documentId}/decisions
// (Quire): {"decision":"APPROVE"|"REJECT","comments"}. It is an alias of
// the workflow decision route for a document a workflow step put in the
// queue (the same applier decides, API.md "Workflows"); for a QUEUE
// action added on its own, approval completes the action (ASYNC_COMPLETE)
// and its next actions run, rejection fails it.
func (s *Server) handleQueueDecision(r *reqCtx) error {
	decision, comments, err := s.readDecision(r)
	if err != nil {
		return err
	}
	qid := pathParam(r, "queueId")
	if _, err := s.db.GetQueue(r.site, qid); err != nil {
		return err
	}
	d := storage.QueueDecision{QueueID: qid, DocumentID: r.docID(), Decision: decision, Comments: comments, Decider: s.actorOf(r)}
	if _, err := s.apply(r, storage.OpQueueDecision, d); err != nil {
		return err
	}
	return r.JSON(messageBody{"Decision saved"})
}
