package index

import (
	"slices"
	"strings"

	"quire/storage"
)

// overlaySeqs returns the change sequence numbers of refs as the worker
// takes them: once their batch is in, only entries not changed again
// since then leave the overlay.
func (ix *Indexer) overlaySeqs(refs []storage.DocRef) map[storage.DocRef]uint64 {
	out := make(map[storage.DocRef]uint64, len(refs))
	ix.ovMu.Lock()
	for _, r := range refs {
		if s, ok := ix.ov[r]; ok {
			out[r] = s
		}
	}
	ix.ovMu.Unlock()
	return out
}

func (ix *Indexer) overlayDone(seqs map[storage.DocRef]uint64) {
	ix.ovMu.Lock()
	for r, s := range seqs {
		if ix.ov[r] == s {
			delete(ix.ov, r)
		}
	}
	ix.ovMu.Unlock()
}

// overlaySite lists the overlay's documents of site.
func (ix *Indexer) overlaySite(site string) []storage.DocRef {
	ix.ovMu.Lock()
	defer ix.ovMu.Unlock()
	var out []storage.DocRef
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
// A document not indexed yet is found once its text is in.
func (ix *Indexer) SearchText(site, text string, o TextOptions, keep func(id string) (bool, error)) ([]Hit, uint64, error) {
	pending := ix.overlaySite(site)
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
