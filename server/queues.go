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
		m := documentJSON(d)
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
// (Quire): {"decision":"APPROVE"|"REJECT","comments"}. Approval completes
// the document's QUEUE action (ASYNC_COMPLETE) and its next actions run;
// rejection fails it.
func (s *Server) handleQueueDecision(r *reqCtx) error {
	var in struct {
		Decision string `json:"decision"`
		Comments string `json:"comments"`
	}
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	in.Decision = strings.ToUpper(in.Decision)
	switch in.Decision {
	case "":
		return invalid("decision", "'decision' is required")
	case "APPROVE", "REJECT":
	default:
		return invalid("decision", "invalid 'decision', use APPROVE or REJECT")
	}
	qid := pathParam(r, "queueId")
	if _, err := s.db.GetQueue(r.site, qid); err != nil {
		return err
	}
	d := storage.QueueDecision{QueueID: qid, DocumentID: r.docID(), Decision: in.Decision, Comments: in.Comments}
	if _, err := s.apply(r, storage.OpQueueDecision, d); err != nil {
		return err
	}
	return r.JSON(messageBody{"Decision saved"})
}
