package server

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"quire/index"
	"quire/storage"
)

// Paging bounds: every paging number a request carries (the `limit`
// query parameter, searchFulltext's `page`, queryFulltext's `from` and
// `size`, the offset in a fulltext `next` token) is read by a function of
// this file and nowhere else, so no handler multiplies or adds unchecked
// client numbers. API.md "Paging bounds" documents them.
const (
	// defaultPageLimit is FormKiQ's default page size.
	defaultPageLimit = 10
	// maxPageLimit caps a page: a larger limit is served as this many.
	maxPageLimit = 1000
)

// listLimit reads the `limit` query parameter: absent or below 1 gives
// FormKiQ's default, above maxPageLimit is capped, anything that is not
// an integer is a 400.
func listLimit(r *reqCtx) (int, error) {
	v := r.Query("limit")
	if v == "" {
		return defaultPageLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		// Digits too many for an int still ask for "as many as you give".
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && v[0] != '-' {
			return maxPageLimit, nil
		}
		return 0, invalid("limit", "invalid 'limit' parameter")
	}
	return clampLimit(n, defaultPageLimit), nil
}

// keyToken and parseKeyToken are the `next` tokens of listings ordered
// by a key: kind names the listing, so a token of one is refused by
// another.
func keyToken(kind, k string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + k))
}

func parseKeyToken(r *reqCtx, kind string) (string, error) {
	tok := r.Query("next")
	if tok == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.HasPrefix(string(b), kind+":") {
		return "", storage.ErrBadToken
	}
	return string(b[len(kind)+1:]), nil
}

// keyPage answers one page of a listing ordered by key, the shape of every
// such list route: it reads `limit` and the `next` token of kind, fetches
// up to limit items after the token's key, and answers {field: [...]}
// with each item as conv writes it (nil leaves an item out) and a `next`
// token when more remain.
func keyPage[T any](r *reqCtx, kind, field string, fetch func(after string, limit int) ([]T, string, error),
	conv func(*T) map[string]any) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	after, err := parseKeyToken(r, kind)
	if err != nil {
		return err
	}
	items, next, err := fetch(after, limit)
	if err != nil {
		return err
	}
	list := make([]map[string]any, 0, len(items))
	for i := range items {
		if m := conv(&items[i]); m != nil {
			list = append(list, m)
		}
	}
	out := map[string]any{field: list}
	if next != "" {
		out["next"] = keyToken(kind, next)
	}
	return r.JSON(out)
}

// clampLimit brings a page size into 1..maxPageLimit; below 1 gives def.
func clampLimit(n, def int) int {
	if n < 1 {
		return def
	}
	return min(n, maxPageLimit)
}

// pageOffset turns a 1-based page number of limit items into the offset
// of its first item: a page below 1 is the first, and a page that starts
// beyond index.MaxResultWindow is refused rather than multiplied out.
func pageOffset(page, limit int) (int, error) {
	page = max(page, 1)
	if page-1 > (index.MaxResultWindow-limit)/limit {
		return 0, invalid("page", "'page' times 'limit' must not exceed "+strconv.Itoa(index.MaxResultWindow))
	}
	return (page - 1) * limit, nil
}

// resultWindow validates an OpenSearch-style from/size pair: a negative
// from is 0, a size outside 1..maxPageLimit gives the default of 10 or the
// cap, and from+size beyond index.MaxResultWindow is refused with
// OpenSearch's message.
func resultWindow(from, size int) (int, int, error) {
	from = max(from, 0)
	size = clampLimit(size, defaultPageLimit)
	if from > index.MaxResultWindow-size {
		return 0, 0, invalid("from", "Result window is too large, from + size must be less than or equal to: ["+
			strconv.Itoa(index.MaxResultWindow)+"]")
	}
	return from, size, nil
}

// offsetToken and parseOffsetToken are the `next` tokens of offset-paged
// searches: the decimal offset of the next page's first hit, within the
// result window.
func offsetToken(n int) string { return strconv.Itoa(n) }

func parseOffsetToken(tok string) (int, error) {
	if tok == "" {
		return 0, nil
	}
	if len(tok) > 9 { // longer than any offset within the window, and no overflow below
		return 0, storage.ErrBadToken
	}
	n := 0
	for _, c := range []byte(tok) {
		if c < '0' || c > '9' {
			return 0, storage.ErrBadToken
		}
		n = n*10 + int(c-'0')
	}
	if n > index.MaxResultWindow {
		return 0, storage.ErrBadToken
	}
	return n, nil
}

// maxURLHours bounds the `duration` (hours) of signed upload and download
// URLs: seven days, the longest an S3 presigned URL (FormKiQ's) may live.
const maxURLHours = 7 * 24

const msgDuration = "'duration' must be a whole number of hours from 1 to 168"

// urlDuration reads the `duration` query parameter of the URL routes:
// absent gives FormKiQ's 48 hours; anything outside 1..maxURLHours is a
// 400 rather than an expiry that overflows into the past.
func urlDuration(r *reqCtx) (time.Duration, error) {
	v := r.Query("duration")
	if v == "" {
		return defaultURLDuration, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxURLHours {
		return 0, invalid("duration", msgDuration)
	}
	return time.Duration(n) * time.Hour, nil
}
