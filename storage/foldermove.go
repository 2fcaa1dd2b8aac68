package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A folder move takes a folder with everything below it into another
// folder, keeping its name. It runs as a series of commands, each moving a
// bounded number of documents (a large folder does not fit one Badger
// transaction): every document is always consistent with the path index
// and the folder tree, and a move interrupted by a crash resumes from its
// job record (FolderMoveJob) where it stopped.

// Folder move job statuses.
const (
	MovePending  = "PENDING"
	MoveComplete = "COMPLETE"
	MoveFailed   = "FAILED"
)

// FolderMoveJob is the record of an asynchronous folder move.
type FolderMoveJob struct {
	JobID        string     `json:"jobId"`
	Source       string     `json:"source"`
	Target       string     `json:"target"`
	Name         string     `json:"name,omitempty"` // the folder's new name (a rename), else its own
	Status       string     `json:"status"`
	Moved        int        `json:"moved"`
	Message      string     `json:"message,omitempty"`
	UserID       string     `json:"userId,omitempty"`
	InsertedDate time.Time  `json:"insertedDate"`
	CompleteDate *time.Time `json:"completedDate,omitempty"`
}

// StartFolderMove is the payload of OpStartFolderMove: it checks the move
// and records the job.
type StartFolderMove struct {
	JobID  string `json:"jobId"`
	Source string `json:"source"`
	Target string `json:"target"`
	// Name, when set, is the name the folder takes in Target (a rename,
	// issue 47); a folder of that name there already is refused (409).
	Name string `json:"name,omitempty"`
}

// MoveFolder is the payload of OpMoveFolder: one step of a move, at most
// Limit documents (or empty folders). JobID, when set, names the job
// record to update.
type MoveFolder struct {
	JobID  string `json:"jobId,omitempty"`
	Source string `json:"source"`
	Target string `json:"target"`
	Limit  int    `json:"limit"`
	Name   string `json:"name,omitempty"` // StartFolderMove's Name
}

// MoveFolderResult reports one step.
type MoveFolderResult struct {
	Moved int
	Done  bool
}

// FinishFolderMove is the payload of OpFinishFolderMove: a job that cannot
// go on (its source vanished) is marked failed.
type FinishFolderMove struct {
	JobID   string `json:"jobId"`
	Message string `json:"message"`
}

func moveJobKey(site, id string) []byte { return []byte(pfxMoveJob + sk(site) + "/" + id) }

// moveDest is where source lands in target: under its own name, or
// under rename when set.
func moveDest(source, target, rename string) string {
	_, name := splitPath(source)
	if rename != "" {
		name = rename
	}
	if target == "" {
		return name
	}
	return target + "/" + name
}

// checkMove validates a move of source into target (as rename when set).
func checkMove(t *tx, site, source, target, rename string) error {
	parent, name := splitPath(source)
	ok, err := t.exists(folderKey(site, parent, true, name))
	if err != nil {
		return err
	}
	if !ok {
		return &NotFoundError{Msg: fmt.Sprintf("folder '%s' not found", source)}
	}
	switch {
	case target == source || strings.HasPrefix(target, source+"/"):
		return Invalid("target", "cannot move a folder into itself")
	case moveDest(source, target, rename) == source:
		return Invalid("target", "folder is already in target")
	}
	return nil
}

// checkRename refuses a rename onto a folder that exists (a move without
// a new name merges into it, as before).
func checkRename(t *tx, site, source, target, rename string) error {
	if rename == "" {
		return nil
	}
	dp, dn := splitPath(moveDest(source, target, rename))
	ok, err := t.exists(folderKey(site, dp, true, dn))
	if err != nil {
		return err
	}
	if ok {
		return &ConflictError{Msg: fmt.Sprintf("folder '%s' already exists", moveDest(source, target, rename))}
	}
	return nil
}

func applyStartFolderMove(t *tx, c *Command) (any, error) {
	p, err := decode[StartFolderMove](c)
	if err != nil {
		return nil, err
	}
	if p.Name != "" && !validFolderName(p.Name) {
		return nil, Invalid("name", "invalid 'name'")
	}
	if err := checkMove(t, c.Site, p.Source, p.Target, p.Name); err != nil {
		return nil, err
	}
	if err := checkRename(t, c.Site, p.Source, p.Target, p.Name); err != nil {
		return nil, err
	}
	if err := checkMoveSet(t, c, p.Source); err != nil {
		return nil, err
	}
	j := FolderMoveJob{JobID: p.JobID, Source: p.Source, Target: p.Target, Name: p.Name, Status: MovePending, UserID: c.User, InsertedDate: c.At}
	return j, t.setJSON(moveJobKey(c.Site, p.JobID), j)
}

// validFolderName reports whether s may name one folder: 1 to 255 bytes
// of valid UTF-8, no "/", no control character, not "." or "..".
func validFolderName(s string) bool {
	if s == "" || len(s) > 255 || !utf8.ValidString(s) || s == "." || s == ".." || strings.ContainsRune(s, '/') {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// checkMoveSet refuses a move before its first step when a document
// below source may not move (GOVERNANCE retention, legal hold, another
// user's checkout: checkMutable), so a move is not left half-done by a
// document it meets on a later step. A lock taken while the move runs
// still stops it at that step (the job is FAILED with the reason).
func checkMoveSet(t *tx, c *Command, source string) error {
	docs, err := subtree(t, c.Site, source, true, 0)
	if err != nil {
		return err
	}
	for _, e := range docs {
		d, err := getDoc(t, c.Site, e.entry.DocumentID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := checkMutable(t, c, d); err != nil {
			return err
		}
	}
	return nil
}

// subtreeEntry is a folder tree entry at or below a moving folder.
type subtreeEntry struct {
	key    []byte
	parent string // folder holding the entry
	folder bool
	name   string
	entry  FolderEntry
}

// subtree lists up to limit entries below source (documents first when
// docs is true, else folders), in key order.
func subtree(t *tx, site, source string, docs bool, limit int) ([]subtreeEntry, error) {
	var out []subtreeEntry
	base := []byte(pfxFolder + sk(site) + "/")
	err := t.each(folderPrefix(site, source)[:len(base)+len(source)], func(k, v []byte) error {
		rest := k[len(base):]
		i := bytes.IndexByte(rest, 0)
		if i < 0 || len(rest) < i+3 {
			return nil
		}
		parent := string(rest[:i])
		if parent != source && !strings.HasPrefix(parent, source+"/") {
			return nil
		}
		folder := rest[i+1] == 'd'
		if folder == docs {
			return nil
		}
		e := subtreeEntry{key: bytes.Clone(k), parent: parent, folder: folder, name: string(rest[i+3:])}
		if err := json.Unmarshal(v, &e.entry); err != nil {
			return err
		}
		out = append(out, e)
		if len(out) == limit {
			return errStop
		}
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, err
}

func applyMoveFolder(t *tx, c *Command) (any, error) {
	p, err := decode[MoveFolder](c)
	if err != nil {
		return nil, err
	}
	if p.Limit <= 0 {
		p.Limit = 200
	}
	var job *FolderMoveJob
	if p.JobID != "" {
		job = &FolderMoveJob{}
		if err := t.getJSON(moveJobKey(c.Site, p.JobID), job); err != nil {
			return nil, err
		}
		if job.Status != MovePending {
			return MoveFolderResult{Done: true}, nil
		}
	}
	if p.Name != "" && !validFolderName(p.Name) {
		return nil, Invalid("name", "invalid 'name'")
	}
	if err := checkMove(t, c.Site, p.Source, p.Target, p.Name); err != nil {
		return nil, err
	}
	parent, name := splitPath(p.Source)
	srcKey := folderKey(c.Site, parent, true, name)
	dest := moveDest(p.Source, p.Target, p.Name)
	relocate := func(dir string) string { return dest + strings.TrimPrefix(dir, p.Source) }
	res := MoveFolderResult{}
	if err := moveFolderPermissions(t, c.Site, p.Source, dest, true); err != nil {
		return nil, err
	}
	// Documents first, each with its path index entry, folder entry and
	// record in this transaction.
	docs, err := subtree(t, c.Site, p.Source, true, p.Limit)
	if err != nil {
		return nil, err
	}
	for _, e := range docs {
		d, err := getDoc(t, c.Site, e.entry.DocumentID)
		if err != nil {
			return nil, err
		}
		if err := releasePath(t, c.Site, d.Path, d.DocumentID); err != nil {
			return nil, err
		}
		// An entry whose document has another path is stale: drop it.
		if d.Path != e.parent+"/"+e.name {
			if err := t.del(e.key); err != nil {
				return nil, err
			}
			continue
		}
		if err := checkMutable(t, c, d); err != nil {
			return nil, err
		}
		if d.Path, err = claimPath(t, c, relocate(e.parent)+"/"+e.name, d.DocumentID); err != nil {
			return nil, err
		}
		d.LastModifiedDate = c.At
		if err := putDoc(t, d); err != nil {
			return nil, err
		}
		res.Moved++
	}
	if len(docs) == 0 {
		// Then the (now empty) folders, and the folder itself last.
		folders, err := subtree(t, c.Site, p.Source, false, p.Limit)
		if err != nil {
			return nil, err
		}
		for _, e := range folders {
			if err := ensureFolders(t, c, relocate(e.parent)+"/"+e.name); err != nil {
				return nil, err
			}
			if err := t.del(e.key); err != nil {
				return nil, err
			}
		}
		if len(folders) < p.Limit {
			if err := ensureFolders(t, c, dest); err != nil {
				return nil, err
			}
			if err := t.del(srcKey); err != nil {
				return nil, err
			}
			if err := moveFolderPermissions(t, c.Site, p.Source, dest, false); err != nil {
				return nil, err
			}
			res.Done = true
		}
	}
	if job != nil {
		job.Moved += res.Moved
		if res.Done {
			job.Status = MoveComplete
			at := c.At
			job.CompleteDate = &at
		}
		if err := t.setJSON(moveJobKey(c.Site, p.JobID), job); err != nil {
			return nil, err
		}
	}
	return res, ensureSite(t, c)
}

func applyFinishFolderMove(t *tx, c *Command) (any, error) {
	p, err := decode[FinishFolderMove](c)
	if err != nil {
		return nil, err
	}
	var job FolderMoveJob
	if err := t.getJSON(moveJobKey(c.Site, p.JobID), &job); err != nil {
		return nil, err
	}
	job.Status, job.Message = MoveFailed, p.Message
	at := c.At
	job.CompleteDate = &at
	return nil, t.setJSON(moveJobKey(c.Site, p.JobID), job)
}

// PendingFolderMoves returns the folder moves not yet finished, of every
// site, for the runner to resume.
func (d *DB) PendingFolderMoves() (map[string][]FolderMoveJob, error) {
	out := map[string][]FolderMoveJob{}
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxMoveJob), func(k, v []byte) error {
			var j FolderMoveJob
			if err := json.Unmarshal(v, &j); err != nil {
				return err
			}
			if j.Status == MovePending {
				site, _, _ := strings.Cut(string(k[len(pfxMoveJob):]), "/")
				out[siteOfKey(site)] = append(out[site], j)
			}
			return nil
		})
	})
	return out, err
}

// GetFolderMove returns a folder move job.
func (d *DB) GetFolderMove(site, id string) (*FolderMoveJob, error) {
	var j FolderMoveJob
	err := d.view(func(t *tx) error { return t.getJSON(moveJobKey(site, id), &j) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("folder move '%s' not found", id)}
	}
	return &j, err
}
