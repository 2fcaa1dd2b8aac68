package index

import (
	"slices"
	"strings"

	"quire/storage"
)

// ovEntry is the overlay's record of a document changed since its last
// indexing.
//   - seq: the sequence number of its latest change.
//   - indexed: the index may hold an entry of the document, which may be
//     stale (it was indexed, then deleted, moved or retagged). When false
//     the index holds nothing of it: a new document, which queries neither
//     exclude from the index's answer nor look up apart. Under a creation
//     load nearly every entry is new, and excluding thousands of ids from
//     every query (an id lookup in every segment each) was a quarter of
//     the server's CPU, taken from the indexer it waited for (DESIGN.md,
//     "Overlay").
//   - taken: a worker batch holding the document is being indexed, so a
//     change now leaves an older version in the index.
//   - probe: the change that is looking the document up in the index
//     (overlayAdd); 0 when none is, or when a write may have added it
//     since.
type ovEntry struct {
	seq, probe     uint64
	indexed, taken bool
}

// ovPut sets the entry of r, keeping ovStale (the entries the index may
// hold, which is what queries walk) in step; the caller holds ovMu.
func (ix *Indexer) ovPut(r storage.DocRef, e ovEntry) {
	ix.ov[r] = e
	if e.indexed {
		ix.ovStale[r] = struct{}{}
	} else {
		delete(ix.ovStale, r)
	}
}

// ovDelete removes the entry of r; the caller holds ovMu.
func (ix *Indexer) ovDelete(r storage.DocRef) {
	delete(ix.ov, r)
	delete(ix.ovStale, r)
}

// overlayAdd records the change of refs. A document without an overlay
// entry is looked up in the index (once per change, not once per query):
// found, it may be stale there; not found, it is new. With an entry, it
// stays as it was, unless a batch holding it is in flight: its version
// in the index is then older than this change.
func (ix *Indexer) overlayAdd(refs []storage.DocRef) {
	var fresh []storage.DocRef
	var probes []uint64
	ix.ovMu.Lock()
	for _, r := range refs {
		ix.ovSeq++
		e, ok := ix.ov[r]
		if !ok {
			// Until the lookup says otherwise, conservatively stale.
			e = ovEntry{indexed: true, probe: ix.ovSeq}
			fresh, probes = append(fresh, r), append(probes, ix.ovSeq)
		} else if e.taken {
			e.indexed = true
		}
		e.seq = ix.ovSeq
		ix.ovPut(r, e)
	}
	ix.ovMu.Unlock()
	if len(fresh) == 0 {
		return
	}
	bids := make([]string, len(fresh))
	for i, r := range fresh {
		bids[i] = docID(r.Site, r.ID)
	}
	have, err := ix.x.hasIDs(bids)
	if err != nil {
		return // stays conservatively stale
	}
	ix.ovMu.Lock()
	for i, r := range fresh {
		// Unless a write that may have indexed it came meanwhile
		// (overlayMark, a batch taking it: they clear probe).
		if e, ok := ix.ov[r]; ok && e.probe == probes[i] {
			e.probe, e.indexed = 0, have[bids[i]]
			ix.ovPut(r, e)
		}
	}
	ix.ovMu.Unlock()
}

// overlayMark records that refs may be in the index from now on (a
// write outside the worker's batches: catch-up, SetText).
func (ix *Indexer) overlayMark(refs []storage.DocRef) {
	ix.ovMu.Lock()
	for _, r := range refs {
		if e, ok := ix.ov[r]; ok {
			e.indexed, e.probe = true, 0
			ix.ovPut(r, e)
		}
	}
	ix.ovMu.Unlock()
}

// overlaySeqs returns the change sequence numbers of refs as the worker
// takes them: once their batch is in, only entries not changed again
// since then leave the overlay.
func (ix *Indexer) overlaySeqs(refs []storage.DocRef) map[storage.DocRef]uint64 {
	out := make(map[storage.DocRef]uint64, len(refs))
	ix.ovMu.Lock()
	for _, r := range refs {
		if e, ok := ix.ov[r]; ok {
			out[r] = e.seq
			if e.probe != 0 {
				// Its lookup may miss the entry this batch writes.
				e.indexed, e.probe = true, 0
			}
			e.taken = true
			ix.ovPut(r, e)
		}
	}
	ix.ovMu.Unlock()
	return out
}

// overlayDone ends a batch that was indexed: its entries leave the
// overlay, except those changed since, whose older version is now in
// the index.
func (ix *Indexer) overlayDone(seqs map[storage.DocRef]uint64) {
	ix.ovMu.Lock()
	for r, s := range seqs {
		e, ok := ix.ov[r]
		switch {
		case !ok:
		case e.seq == s:
			ix.ovDelete(r)
		default:
			e.indexed, e.taken = true, false
			ix.ovPut(r, e)
		}
	}
	ix.ovMu.Unlock()
}

// overlayFailed ends a batch that failed: its entries stay, and as the
// batch may have been written in part, they may be in the index.
func (ix *Indexer) overlayFailed(seqs map[storage.DocRef]uint64) {
	ix.ovMu.Lock()
	for r := range seqs {
		if e, ok := ix.ov[r]; ok {
			e.indexed, e.taken = true, false
			ix.ovPut(r, e)
		}
	}
	ix.ovMu.Unlock()
}

// overlaySite lists the overlay's documents of site.
func (ix *Indexer) overlaySite(site string) []storage.DocRef {
	return ix.overlayOf(site, false)
}

// overlayOf lists the overlay's documents of site, only those the index
// may hold (stale) when stale is set.
func (ix *Indexer) overlayOf(site string, stale bool) []storage.DocRef {
	ix.ovMu.Lock()
	defer ix.ovMu.Unlock()
	var out []storage.DocRef
	if stale {
		for r := range ix.ovStale {
			if r.Site == site {
				out = append(out, r)
			}
		}
		return out
	}
	for r := range ix.ov {
		if r.Site == site {
			out = append(out, r)
		}
	}
	return out
}

// SearchText runs a fulltext search of site (Index.Text) consistent with
// the overlay: the index entry of a document changed since its last
// indexing may be stale (the document deleted, moved to a folder the
// caller may not read, retagged), so the index answers for every other
// document, and keep decides, against storage, on each overlay document
// whose indexed version matches. Those kept follow the index's hits (in
// score order among themselves) and count in the total; the overlay is
// small (documents changed within about a second), and empty at rest.
// A new document (never indexed: nothing of it in the index to be stale)
// is left to the index, where it is found once its text is in.
func (ix *Indexer) SearchText(site, text string, o TextOptions, keep func(id string) (bool, error)) ([]Hit, uint64, error) {
	if o.Language == "" {
		o.Language = ix.siteLanguage(site)
	}
	pending := ix.overlayOf(site, true)
	if len(pending) == 0 {
		return ix.x.Text(site, text, o)
	}
	ids := make([]string, len(pending))
	for i, r := range pending {
		ids[i] = r.ID
	}
	if o.IDs != nil {
		want := make(map[string]bool, len(o.IDs))
		for _, id := range o.IDs {
			want[id] = true
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return !want[id] })
	}
	if len(ids) == 0 {
		return ix.x.Text(site, text, o)
	}
	main := o
	main.Exclude = append(slices.Clip(o.Exclude), ids...)
	hits, total, err := ix.x.Text(site, text, main)
	if err != nil {
		return nil, 0, err
	}
	ov := o
	ov.IDs, ov.From, ov.Size = ids, 0, min(len(ids), MaxResultWindow)
	cand, _, err := ix.x.Text(site, text, ov)
	if err != nil {
		return nil, 0, err
	}
	var kept []Hit
	for _, h := range cand {
		ok, err := keep(h.ID)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			kept = append(kept, h)
		}
	}
	// The page is cut from the index's hits followed by the kept ones.
	size := o.Size
	if size <= 0 {
		size = 10 // as Text
	}
	if len(hits) < size {
		k0 := max(o.From-int(total), 0)
		if k0 < len(kept) {
			hits = append(hits, kept[k0:min(len(kept), k0+size-len(hits))]...)
		}
	}
	return hits, total + uint64(len(kept)), nil
}

// Prefix finds documents of site whose file name (field "filename") or
// folder ("folder") starts with prefix, case-insensitively, ordered by
// path, after the Sort of the previous page's last hit. It merges the
// index with the overlay of documents changed since their last indexing
// (read from storage), so a write is found as soon as it returns. more
// reports that further pages may follow from next.
func (ix *Indexer) Prefix(site, field, prefix string, after []string, limit int) (hits []Hit, next []string, more bool, err error) {
	pending := ix.overlaySite(site)
	hits, err = ix.x.Prefix(site, field, prefix, after, limit)
	if err != nil {
		return nil, nil, false, err
	}
	full := len(hits) == limit
	if full {
		next = hits[len(hits)-1].Sort
	}
	if len(pending) == 0 {
		return hits, next, full, nil
	}
	changed := make(map[string]bool, len(pending))
	for _, r := range pending {
		changed[r.ID] = true
	}
	hits = slices.DeleteFunc(hits, func(h Hit) bool { return changed[h.ID] })
	f, err := prefixField(field)
	if err != nil {
		return nil, nil, false, err
	}
	lower := strings.ToLower(prefix)
	for _, r := range pending {
		v, err := ix.db.ViewForIndex(r.Site, r.ID)
		if err != nil {
			return nil, nil, false, err
		}
		if v == nil {
			continue
		}
		dir, name := splitDocPath(v.Document.Path)
		subject := name
		if f == fFolderKey {
			subject = dir
		}
		if !strings.HasPrefix(strings.ToLower(subject), lower) {
			continue
		}
		key := []string{nameTerm(f, r.Site, v.Document.Path, r.ID)}
		if len(after) == 1 && compareSort(key, after) <= 0 {
			continue
		}
		// Beyond the index's page, an entry belongs to a later page.
		if full && compareSort(key, next) > 0 {
			continue
		}
		hits = append(hits, Hit{Site: r.Site, ID: r.ID, Sort: key})
	}
	slices.SortFunc(hits, func(a, b Hit) int { return compareSort(a.Sort, b.Sort) })
	if len(hits) > limit {
		hits = hits[:limit]
		return hits, hits[limit-1].Sort, true, nil
	}
	return hits, next, full, nil
}

func compareSort(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}
