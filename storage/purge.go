package storage

import (
	"errors"
	"strings"
)

// A purge (hard delete) removes a document with its artifacts and its
// children and theirs, in the command's one transaction, in two phases:
// first (newPurge, addDoc) every key of every record of the cascade that
// only an iterator finds, before the cascade's first write; then (run) the
// deletes, which read with point reads only. Every iterator a read-write
// Badger transaction opens first copies and sorts all the transaction's
// pending writes (newPendingWritesIterator; scanCached in db.go avoids the
// same cost): with the iterators opened between the deletes, the hard
// delete of a document with 1,000 artifacts opened about 11,000 iterators
// over up to about 20,000 pending deletes each, quadratic (about 22 CPU
// seconds under the race detector; BenchmarkPurge_Artifacts).
//
// Run reads the values behind the gathered keys when it gets to them: a
// record's purge changes another record's keys (a relationship attribute
// of a document purged with it), and the point read sees that change as
// the iterator did when it was opened at the same place. No purge writes a
// key under another record's gathered prefixes that was not there before,
// so the keys gathered first are the keys the iterators found.

// recordScan is one record of a purge and the keys gathered for it.
type recordScan struct {
	d *Document
	// drop are deleted as they are: reviews and their decisions, notes,
	// actions, texts, results, pending renditions.
	drop [][]byte
	// The keys whose values the delete reads.
	attrs, tags, workflows, versions, reminders [][]byte
}

// purge is a cascade gathered by scanPurge, run by run.
type purge struct {
	site     string
	queues   []string // ids of the site's queues (removeFromQueues)
	dangling [][]byte // artifact index keys whose record is gone
	recs     []*recordScan
	seen     map[string]bool
}

func newPurge(t *tx, site string) (*purge, error) {
	p := &purge{site: site, seen: map[string]bool{}}
	err := t.each(queuePrefix(site), func(_, v []byte) error {
		var q Queue
		if err := jsonUnmarshal(v, &q); err != nil {
			return err
		}
		p.queues = append(p.queues, q.QueueID)
		return nil
	})
	return p, err
}

// addRecord gathers d's keys; a record met twice is purged once.
func (p *purge) addRecord(t *tx, d *Document) {
	if p.seen[d.DocumentID] {
		return
	}
	p.seen[d.DocumentID] = true
	site, doc := p.site, d.DocumentID
	r := &recordScan{
		d:         d,
		attrs:     t.keys(docAttrPrefix(site, doc)),
		tags:      t.keys(tagPrefix(site, doc)),
		workflows: t.keys(docWorkflowPrefix(d.SiteID, doc)),
		reminders: t.keys(notificationPrefix(site, doc)),
	}
	if d.VersionCount > 0 {
		r.versions = t.keys(versionPrefix(site, doc))
	}
	for _, pfx := range [][]byte{reviewPrefix(site, doc), docDecisionPrefix(site, doc), notePrefix(site, doc),
		actionPrefix(d.SiteID, doc), textPrefix(d.SiteID, doc), resultPrefix(d.SiteID, doc, ""), renditionPrefix(d.SiteID, doc)} {
		r.drop = append(r.drop, t.keys(pfx)...)
	}
	p.recs = append(p.recs, r)
}

// addDoc gathers d, after its artifacts and its children (deleteDoc's
// order), checking each document may be deleted.
func (p *purge) addDoc(t *tx, c *Command, d *Document) error {
	if err := checkMutable(t, c, d); err != nil {
		return err
	}
	if err := p.addArtifacts(t, d); err != nil {
		return err
	}
	for _, child := range d.Children {
		if p.seen[child] {
			continue
		}
		cd, err := getDoc(t, p.site, child)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := p.addDoc(t, c, cd); err != nil {
			return err
		}
	}
	p.addRecord(t, d)
	return nil
}

// addArtifacts gathers every artifact of d (not d itself).
func (p *purge) addArtifacts(t *tx, d *Document) error {
	if d.ArtifactCount == 0 {
		return nil
	}
	for _, k := range t.keys(artifactPrefix(p.site, d.DocumentID)) {
		id := string(k[strings.LastIndexByte(string(k), '/')+1:])
		if p.seen[id] {
			p.dangling = append(p.dangling, k)
			continue
		}
		a, err := getDoc(t, p.site, id)
		if errors.Is(err, ErrNotFound) {
			p.dangling = append(p.dangling, k)
			continue
		}
		if err != nil {
			return err
		}
		p.addRecord(t, a)
	}
	return nil
}

// run deletes what p gathered; n is the number of records removed.
func (p *purge) run(t *tx) (n int64, err error) {
	for _, k := range p.dangling {
		if err := t.del(k); err != nil {
			return 0, err
		}
	}
	for _, r := range p.recs {
		if err := p.deleteRecord(t, r); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func (p *purge) deleteRecord(t *tx, r *recordScan) error {
	site, d := p.site, r.d
	if d.ArtifactOf != "" {
		if err := t.del(artifactKey(site, d.ArtifactOf, d.InsertedDate, d.DocumentID)); err != nil {
			return err
		}
	} else if d.DeletedDate == nil {
		if err := releasePath(t, site, d.Path, d.DocumentID); err != nil {
			return err
		}
	}
	if d.BelongsToDocumentID == "" && d.ArtifactOf == "" {
		k := insertedKey(site, d.InsertedDate, d.DocumentID)
		if d.DeletedDate != nil {
			k = deletedKey(site, *d.DeletedDate, d.DocumentID)
		}
		if err := t.del(k); err != nil {
			return err
		}
	}
	if err := deleteDocAttributes(t, site, d.DocumentID, r.attrs, r.reminders); err != nil {
		return err
	}
	if err := deleteTags(t, site, d.DocumentID, r.tags); err != nil {
		return err
	}
	for _, k := range r.drop {
		if err := t.del(k); err != nil {
			return err
		}
	}
	if err := clearActions(t, d, p.queues, r.workflows); err != nil {
		return err
	}
	if d.HasContent {
		if err := releaseManifest(t, d.ContentSHA256); err != nil {
			return err
		}
	}
	if err := dropVersions(t, r.versions); err != nil { // versions.go
		return err
	}
	if err := t.del(detectKey(site, d.DocumentID)); err != nil {
		return err
	}
	if err := t.del(fulltextKey(site, d.DocumentID)); err != nil {
		return err
	}
	return t.del(docKey(site, d.DocumentID))
}

// eachGathered calls fn with the value of each of keys (gathered by a
// purge before its first delete) still there when the delete reads it.
func eachGathered[T any](t *tx, keys [][]byte, fn func(k []byte, v *T) error) error {
	for _, k := range keys {
		var v T
		if err := t.getJSON(k, &v); errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if err := fn(k, &v); err != nil {
			return err
		}
	}
	return nil
}

// deleteRecord purges one record (a document without its artifacts and
// children, or an artifact).
func deleteRecord(t *tx, site string, d *Document) error {
	p, err := newPurge(t, site)
	if err != nil {
		return err
	}
	p.addRecord(t, d)
	_, err = p.run(t)
	return err
}

// deleteDoc purges d, its artifacts and its children; n is the number of
// records removed.
func deleteDoc(t *tx, c *Command, d *Document) (n int64, err error) {
	p, err := newPurge(t, c.Site)
	if err != nil {
		return 0, err
	}
	if err := p.addDoc(t, c, d); err != nil {
		return 0, err
	}
	return p.run(t)
}
