package api

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// JSONRevalidated answers v as JSON with a weak ETag, or 304 Not Modified
// without a body when the request's If-None-Match names that ETag (API.md
// "Revalidating polls"). The ETag is a hash of the site, the query
// (paging: limit, next; filters; artifactId) and the answer's bytes, so it
// changes whenever the answer would, and never names stale state: it is
// computed from the answer itself, read in this request.
func (r *Request) JSONRevalidated(v any) error {
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	h := sha256.New()
	h.Write([]byte(r.Site))
	h.Write([]byte{0})
	h.Write(r.Context().QueryArgs().QueryString())
	h.Write([]byte{0})
	h.Write(b)
	tag := `W/"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`
	r.Set(fiber.HeaderETag, tag)
	r.Set(fiber.HeaderCacheControl, "no-cache")
	if etagMatches(r.Get(fiber.HeaderIfNoneMatch), tag) {
		return r.SendStatus(http.StatusNotModified)
	}
	r.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return r.Send(b)
}

// etagMatches reports whether an If-None-Match value names tag, by the
// weak comparison RFC 9110 §13.1.2 asks for ("*" names any).
func etagMatches(header, tag string) bool {
	want := strings.TrimPrefix(tag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || t != "" && strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
