package storage

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Notes on a document (Quire; issue 47; API.md "Document notes"): short
// texts people leave on a document, oldest first. They belong to the
// document: a soft delete keeps them (a restore brings them back), a
// purge removes them with it (deleteRecord).

// Note limits, checked by the server before it applies and again here.
const (
	MaxNoteChars        = 4000 // characters of one note's text
	MaxNotesPerDocument = 200  // notes one document may hold
)

// Note is one note of a document.
type Note struct {
	DocumentID   string    `json:"documentId"`
	NoteID       string    `json:"noteId"`
	Text         string    `json:"text"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// NoteRef is the payload of OpDeleteNote.
type NoteRef struct {
	DocumentID string `json:"documentId"`
	NoteID     string `json:"noteId"`
}

func notePrefix(site, doc string) []byte { return []byte(pfxNote + sk(site) + "/" + doc + "/") }

func noteKey(site, doc string, at time.Time, id string) []byte {
	return []byte(pfxNote + sk(site) + "/" + doc + "/" + tsHex(at) + "/" + id)
}

// noteCursor is a note's place in its document's list (the key's tail).
func noteCursor(n *Note) string { return tsHex(n.InsertedDate) + "/" + n.NoteID }

func noteNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Note '%s' not found", id)}
}

// CheckNoteText refuses a note's text that is empty, too long or not
// valid UTF-8.
func CheckNoteText(s string) error {
	switch {
	case !utf8.ValidString(s):
		return Invalid("text", "'text' is not valid UTF-8")
	case strings.TrimSpace(s) == "":
		return Invalid("text", "'text' is required")
	case utf8.RuneCountInString(s) > MaxNoteChars:
		return Invalid("text", fmt.Sprintf("'text' is longer than %d characters", MaxNoteChars))
	}
	return nil
}

func applyAddNote(t *tx, c *Command) (any, error) {
	p, err := decode[Note](c)
	if err != nil {
		return nil, err
	}
	if err := CheckNoteText(p.Text); err != nil {
		return nil, err
	}
	if p.NoteID == "" || len(p.NoteID) > MaxKeyBytes || strings.ContainsAny(p.NoteID, "/\x00") {
		return nil, Invalid("noteId", "invalid 'noteId'")
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if d.ArtifactOf != "" {
		return nil, docNotFound(p.DocumentID)
	}
	if t.count(notePrefix(c.Site, p.DocumentID)) >= MaxNotesPerDocument {
		return nil, Invalid("note", fmt.Sprintf("a document holds at most %d notes", MaxNotesPerDocument))
	}
	p.UserID, p.InsertedDate = c.User, c.At
	return nil, t.setJSON(noteKey(c.Site, p.DocumentID, p.InsertedDate, p.NoteID), p)
}

func applyDeleteNote(t *tx, c *Command) (any, error) {
	p, err := decode[NoteRef](c)
	if err != nil {
		return nil, err
	}
	if _, err := getLiveDoc(t, c.Site, p.DocumentID); err != nil {
		return nil, err
	}
	for _, k := range t.keys(notePrefix(c.Site, p.DocumentID)) {
		if strings.HasSuffix(string(k), "/"+p.NoteID) {
			return nil, t.del(k)
		}
	}
	return nil, noteNotFound(p.NoteID)
}

// Notes lists a document's notes, oldest first, after the cursor after
// (a previous page's next).
func (d *DB) Notes(site, doc, after string, limit int) ([]Note, string, error) {
	return listPage(d, notePrefix(site, doc), after, limit, noteCursor)
}
