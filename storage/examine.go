package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ExamineObject is a PDF uploaded to be examined (GET /objects/examine/pdf
// gives the upload URL, GET /objects/examine/{id}/pdf reads it). It holds
// a reference on its content until it expires and is swept.
type ExamineObject struct {
	ID           string    `json:"id"`
	ContentSHA   string    `json:"contentSha256"`
	Size         int64     `json:"size"`
	InsertedDate time.Time `json:"insertedDate"`
	Expires      time.Time `json:"expires"`
}

// Examine limits.
const (
	ExamineTTL      = 24 * time.Hour
	MaxExamineBytes = 100 << 20
)

// PutExamine is the payload of OpPutExamine: the uploaded content.
type PutExamine struct {
	ID      string   `json:"id"`
	Content Manifest `json:"content"`
	Chunks  []Chunk  `json:"chunks,omitempty"`
}

// DeleteExamine is the payload of OpDeleteExamine; with Expired set only
// an object expired at the command's time is removed (the sweep).
type DeleteExamine struct {
	ID      string `json:"id"`
	Expired bool   `json:"expired,omitempty"`
}

func examineNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Examine object '%s' not found", id)}
}

func applyPutExamine(t *tx, c *Command) (any, error) {
	p, err := decode[PutExamine](c)
	if err != nil {
		return nil, err
	}
	if p.Content.Size > MaxExamineBytes {
		return nil, Invalid("content", fmt.Sprintf("a PDF to examine is at most %d bytes", MaxExamineBytes))
	}
	if ok, err := t.exists(examineKey(c.Site, p.ID)); err != nil {
		return nil, err
	} else if ok {
		return nil, &ConflictError{Msg: fmt.Sprintf("examine object '%s' already has its content", p.ID)}
	}
	if err := putChunks(t, p.Chunks); err != nil {
		return nil, err
	}
	if err := attachManifest(t, p.Content); err != nil {
		return nil, err
	}
	o := ExamineObject{ID: p.ID, ContentSHA: p.Content.SHA256, Size: p.Content.Size, InsertedDate: c.At, Expires: c.At.Add(ExamineTTL)}
	return nil, t.setJSON(examineKey(c.Site, p.ID), o)
}

func applyDeleteExamine(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteExamine](c)
	if err != nil {
		return nil, err
	}
	var o ExamineObject
	switch err := t.getJSON(examineKey(c.Site, p.ID), &o); {
	case errors.Is(err, ErrNotFound):
		return nil, examineNotFound(p.ID)
	case err != nil:
		return nil, err
	}
	if p.Expired && c.At.Before(o.Expires) {
		return false, nil
	}
	if err := releaseManifest(t, o.ContentSHA); err != nil {
		return nil, err
	}
	return true, t.del(examineKey(c.Site, p.ID))
}

// GetExamine returns an examine object that has not expired at time at.
func (d *DB) GetExamine(site, id string, at time.Time) (*ExamineObject, error) {
	var o ExamineObject
	err := d.view(func(t *tx) error { return t.getJSON(examineKey(site, id), &o) })
	if errors.Is(err, ErrNotFound) || err == nil && !at.Before(o.Expires) {
		return nil, examineNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}

// ExpiredExamines lists up to limit examine objects of every site expired
// at time at.
func (d *DB) ExpiredExamines(at time.Time, limit int) ([]DocRef, error) {
	return expired(d, pfxExamine, at, limit, func(v []byte) (string, time.Time, error) {
		var o ExamineObject
		err := json.Unmarshal(v, &o)
		return o.ID, o.Expires, err
	})
}
