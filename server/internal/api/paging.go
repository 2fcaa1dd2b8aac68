package api

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
	// DefaultPageLimit is FormKiQ's default page size.
	DefaultPageLimit = 10
	// MaxPageLimit caps a page: a larger limit is served as this many.
	MaxPageLimit = 1000
)

// ListLimit reads the `limit` query parameter: absent or below 1 gives
// FormKiQ's default, above MaxPageLimit is capped, anything that is not
// an integer is a 400.
func ListLimit(r *Request) (int, error) {
	v := r.Query("limit")
	if v == "" {
		return DefaultPageLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		// Digits too many for an int still ask for "as many as you give".
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && v[0] != '-' {
			return MaxPageLimit, nil
		}
		return 0, Invalid("limit", "invalid 'limit' parameter")
	}
	return ClampLimit(n, DefaultPageLimit), nil
}

// KeyToken and ParseKeyToken are the `next` tokens of listings ordered
// by a key: kind names the listing, so a token of one is refused by
// another.
func KeyToken(kind, k string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(kind + ":" + k))
}

func ParseKeyToken(r *Request, kind string) (string, error) {
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

// KeyPage answers one page of a listing ordered by key, the shape of every
// such list route: it reads `limit` and the `next` token of kind, fetches
// up to limit items after the token's key, and answers {field: [...]}
// with each item as conv writes it (nil leaves an item out) and a `next`
// token when more remain.
func KeyPage[T any](r *Request, kind, field string, fetch func(after string, limit int) ([]T, string, error),
	conv func(*T) map[string]any) error {
	limit, err := ListLimit(r)
	if err != nil {
		return err
	}
	after, err := ParseKeyToken(r, kind)
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
		out["next"] = KeyToken(kind, next)
	}
	return r.JSON(out)
}

// ClampLimit brings a page size into 1..maxPageLimit; below 1 gives def.
func ClampLimit(n, def int) int {
	if n < 1 {
		return def
	}
	return min(n, MaxPageLimit)
}

// PageOffset turns a 1-based page number of limit items into the offset
// of its first item: a page below 1 is the first, and a page that starts
// beyond index.MaxResultWindow is refused rather than multiplied out.
func PageOffset(page, limit int) (int, error) {
	page = max(page, 1)
	if page-1 > (index.MaxResultWindow-limit)/limit {
		return 0, Invalid("page", "'page' times 'limit' must not exceed "+strconv.Itoa(index.MaxResultWindow))
	}
	return (page - 1) * limit, nil
}

// ResultWindow validates an OpenSearch-style from/size pair: a negative
// from is 0, a size outside 1..maxPageLimit gives the default of 10 or the
// cap, and from+size beyond index.MaxResultWindow is refused with
// OpenSearch's message.
func ResultWindow(from, size int) (int, int, error) {
	from = max(from, 0)
	size = ClampLimit(size, DefaultPageLimit)
	if from > index.MaxResultWindow-size {
		return 0, 0, Invalid("from", "Result window is too large, from + size must be less than or equal to: ["+
			strconv.Itoa(index.MaxResultWindow)+"]")
	}
	return from, size, nil
}

// OffsetToken and ParseOffsetToken are the `next` tokens of offset-paged
// searches: the decimal offset of the next page's first hit, within the
// result window.
func OffsetToken(n int) string { return strconv.Itoa(n) }

func ParseOffsetToken(tok string) (int, error) {
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

const MsgDuration = "'duration' must be a whole number of hours from 1 to 168"

// UrlDuration reads the `duration` query parameter of the URL routes:
// absent gives FormKiQ's 48 hours; anything outside 1..maxURLHours is a
// 400 rather than an expiry that overflows into the past.
func UrlDuration(r *Request) (time.Duration, error) {
	v := r.Query("duration")
	if v == "" {
		return DefaultURLDuration, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxURLHours {
		return 0, Invalid("duration", MsgDuration)
	}
	return time.Duration(n) * time.Hour, nil
}
