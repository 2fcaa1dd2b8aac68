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
