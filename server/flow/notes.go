package flow

import (
	"net/http"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// Notes on a document (Quire; issue 47; storage/notes.go; API.md
// "Document notes"). The route rows give the permissions: reading a
// document's notes needs READ, adding one WRITE, removing one DELETE, each
// on the site and on the document's folder (resolveDocument), as for the
// document itself.

func noteJSON(n *storage.Note) map[string]any {
	return map[string]any{"noteId": n.NoteID, "documentId": n.DocumentID, "text": n.Text,
		"userId": n.UserID, "insertedDate": api.FormatDate(n.InsertedDate)}
}

// HandleGetNotes serves GET /documents/{documentId}/notes.
func (s *Handlers) HandleGetNotes(r *api.Request) error {
	if _, err := s.DB.GetDocument(r.Site, r.PathDocID()); err != nil {
		return err
	}
	return api.KeyPage(r, "nt", "notes", func(after string, limit int) ([]storage.Note, string, error) {
		return s.DB.Notes(r.Site, r.PathDocID(), after, limit)
	}, noteJSON)
}

// HandleAddNote serves POST /documents/{documentId}/notes.
func (s *Handlers) HandleAddNote(r *api.Request) error {
	var in struct {
		Note *struct {
			Text string `json:"text"`
		} `json:"note"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Note == nil {
		return api.Invalid("note", "'note' is required")
	}
	if err := storage.CheckNoteText(in.Note.Text); err != nil {
		return err
	}
	n := storage.Note{DocumentID: r.PathDocID(), NoteID: r.NewID(), Text: in.Note.Text}
	if _, err := s.Apply(r, storage.OpAddNote, n); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"noteId": n.NoteID})
}

// HandleDeleteNote serves DELETE /documents/{documentId}/notes/{noteId}.
func (s *Handlers) HandleDeleteNote(r *api.Request) error {
	id := api.PathParam(r, "noteId")
	if id == "" || len(id) > storage.MaxKeyBytes || strings.ContainsAny(id, "/\x00") {
		return &storage.NotFoundError{Msg: "Note not found"}
	}
	if _, err := s.Apply(r, storage.OpDeleteNote, storage.NoteRef{DocumentID: r.PathDocID(), NoteID: id}); err != nil {
		return err
	}
	return r.JSON(map[string]any{"message": "Note '" + id + "' deleted"})
}
