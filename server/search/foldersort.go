package search

import (
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"quire/server/internal/api"
	"quire/server/internal/testhooks"
	"quire/storage"
)

// MaxSortedFolder is the most entries GET /folders sorts (Quire's sort
// and sortBy, issue 47): a folder of more is answered in the stored
// order, with "sorted": false and no totalCount, so a request's cost
// stays bounded (it reads at most this many entries and one more).
const MaxSortedFolder = 5000

// folderSorts are the sortBy values of GET /folders.
var folderSorts = map[string]bool{"path": true, "lastModifiedDate": true, "contentLength": true, "contentType": true}

// folderSort is a GET /folders request's order: by (a sortBy value) and
// desc; zero when the request asks for none (the stored order).
type folderSort struct {
	by   string
	desc bool
}

// parseFolderSort reads sort (FormKiQ's ASC|DESC) and sortBy (Quire's);
// either one alone asks for a sorted listing (by path, ascending, where
// the other is missing).
func parseFolderSort(r *api.Request) (folderSort, bool, error) {
	dir, by := r.Query("sort"), r.Query("sortBy")
	if dir == "" && by == "" {
		return folderSort{}, false, nil
	}
	var errs []storage.ValidationItem
	if dir != "" && dir != "ASC" && dir != "DESC" {
		errs = append(errs, storage.ValidationItem{Key: "sort", Msg: "invalid 'sort', use ASC or DESC"})
	}
	if by != "" && !folderSorts[by] {
		errs = append(errs, storage.ValidationItem{Key: "sortBy", Msg: "invalid 'sortBy', use path, lastModifiedDate, contentLength or contentType"})
	}
	if len(errs) > 0 {
		return folderSort{}, false, &storage.ValidationError{Items: errs}
	}
	if by == "" {
		by = "path"
	}
	return folderSort{by: by, desc: dir == "DESC"}, true, nil
}

// sortedToken is the kind of a sorted listing's next token: the offset
// of the next page's first entry (api.KeyToken).
const sortedToken = "sorted"

// listFolderSorted answers GET /folders in the order o asks: the whole
// folder (at most MaxSortedFolder entries) is read, the caller's visible
// entries sorted (folders first, then documents), and the page at the
// token's offset answered with totalCount. A larger folder is answered
// in the stored order, marked "sorted": false.
func (s *Handlers) listFolderSorted(r *api.Request, folder string, o folderSort, limit int) (map[string]any, error) {
	bound := testhooks.SortedFolderBound(MaxSortedFolder)
	tok := r.PageToken()
	offset := 0
	if tok != "" {
		raw, err := api.ParseKeyToken(r, sortedToken)
		if err == nil {
			n, perr := strconv.Atoi(raw)
			if perr != nil || n < 0 || n > bound {
				return nil, storage.ErrBadToken
			}
			offset = n
		}
		if err != nil {
			offset = -1 // a token of the stored order: a large folder's next page
		}
	}
	// A folder past the bound is known from its keys alone: its entries
	// and documents are not read twice.
	large, err := s.DB.FolderLarger(r.Site, folder, bound)
	if err != nil {
		return nil, err
	}
	page := &storage.FolderPage{}
	if !large {
		if page, err = s.DB.ListFolderPage(r.Site, folder, "", bound+1); err != nil {
			return nil, err
		}
		large = len(page.Items) > bound
	}
	if large || offset < 0 {
		if offset >= 0 && tok != "" {
			return nil, storage.ErrBadToken // a sorted token, but the folder has grown past the bound
		}
		if !large {
			return nil, storage.ErrBadToken // a stored-order token, but the folder is now sorted
		}
		res, err := s.listFolder(r, folder, false, "", limit)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"documents": api.NonNil(res.docs), "sorted": false}
		if res.next != "" {
			out["next"] = res.next
		}
		return out, nil
	}
	type entry struct {
		name   string
		folder bool
		m      map[string]any
		date   time.Time
		length int64
		ctype  string
	}
	res := s.newResults(r)
	var entries []entry
	for _, it := range page.Items {
		full := it.Name
		if folder != "" {
			full = folder + "/" + it.Name
		}
		n := len(res.docs)
		e := entry{name: it.Name, folder: it.Entry.Folder}
		if it.Entry.Folder {
			res.addFolder(folderJSON(r, it, full), full)
			e.date = it.Entry.InsertedDate
		} else if d := it.Doc; d != nil {
			m := s.WithThumbnail(r, api.DocumentJSON(d), d)
			m["indexKey"] = FolderIndexKey(full)
			res.add(m, d.DocumentID)
			e.date, e.length, e.ctype = d.LastModifiedDate, d.ContentLength, d.ContentType
		}
		if len(res.docs) > n { // visible to the caller
			e.m = res.docs[n]
			entries = append(entries, e)
		}
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.folder != b.folder {
			return a.folder // folders first, in either direction
		}
		c := 0
		switch o.by {
		case "lastModifiedDate":
			c = a.date.Compare(b.date)
		case "contentLength":
			c = cmpInt(a.length, b.length)
		case "contentType":
			c = strings.Compare(strings.ToLower(a.ctype), strings.ToLower(b.ctype))
		}
		if c == 0 {
			c = NaturalCompare(a.name, b.name)
		}
		if o.desc {
			c = -c
		}
		return c < 0
	})
	docs := []map[string]any{}
	for i := offset; i < len(entries) && len(docs) < limit; i++ {
		docs = append(docs, entries[i].m)
	}
	out := map[string]any{"documents": docs, "totalCount": len(entries)}
	if end := offset + len(docs); end < len(entries) {
		out["next"] = api.KeyToken(sortedToken, strconv.Itoa(end))
	}
	return out, nil
}

// folderJSON is a folder entry of a listing.
func folderJSON(r *api.Request, it storage.FolderItem, full string) map[string]any {
	return map[string]any{
		"siteId":       r.Site,
		"folder":       true,
		"path":         it.Name,
		"documentId":   folderID(r.Site, full),
		"indexKey":     FolderIndexKey(full),
		"insertedDate": api.FormatDate(it.Entry.InsertedDate),
		"userId":       it.Entry.UserID,
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NaturalCompare orders names as people read them: case-insensitive,
// with runs of digits compared as numbers (n15 before n144, n2 before
// n15); names equal that way are ordered by their bytes, so the order is
// total and stable.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				return cmpInt(int64(len(na)), int64(len(nb)))
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		ra, wa := utf8.DecodeRuneInString(a[i:])
		rb, wb := utf8.DecodeRuneInString(b[j:])
		if la, lb := unicode.ToLower(ra), unicode.ToLower(rb); la != lb {
			return cmpInt(int64(la), int64(lb))
		}
		i, j = i+wa, j+wb
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
