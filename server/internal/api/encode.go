package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"quire/storage"
)

// dateLayout is FormKiQ's date format: yyyy-MM-dd'T'HH:mm:ssZ in UTC.
const dateLayout = "2006-01-02T15:04:05-0700"

func FormatDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(dateLayout)
}

// MarshalJSON encodes v as JSON without HTML escaping ('&', '<' and '>'
// stay as they are) and without encoding/json's trailing newline. Every
// JSON answer goes through it (fiber.Config.JSONEncoder).
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// bodyBytes reads the request body, at most limit bytes (over it:
// ErrBodyTooLarge, the rest drained), from the stream when fiber streams
// it, else from fiber's buffer (which the caller must not keep past the
// request).
func (r *Request) bodyBytes(limit int) ([]byte, error) {
	if n := r.Request().Header.ContentLength(); n > limit {
		Drain(r.Ctx)
		return nil, ErrBodyTooLarge
	}
	var body []byte
	if st := BodyStream(r.Ctx); st != nil {
		// A declared length is read into one buffer of that size (one
		// more byte tells a body longer than declared); io.ReadAll would
		// regrow and copy it a dozen times on the way to a few MB.
		if n := r.Request().Header.ContentLength(); n >= 0 {
			b := make([]byte, n+1)
			m, err := io.ReadFull(st, b)
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return nil, ErrInvalidBody
			}
			body = b[:m]
		} else {
			b, err := io.ReadAll(io.LimitReader(st, int64(limit)+1))
			if err != nil {
				return nil, ErrInvalidBody
			}
			body = b
		}
	} else {
		body = r.Body()
	}
	if len(body) > limit {
		Drain(r.Ctx)
		return nil, ErrBodyTooLarge
	}
	return body, nil
}

// ReadBody reads a JSON request body into v. Bodies over MaxBodyBytes,
// malformed JSON and values of the wrong type are 400s; an empty body is
// "invalid body" too (ErrNoBody, which a route may answer differently).
func (r *Request) ReadBody(v any, limit int) error {
	body, err := r.bodyBytes(limit)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(body); len(t) == 0 || string(t) == "null" {
		return ErrNoBody
	}
	sum := sha256.Sum256(body)
	r.bodySum = sum[:]
	// encoding/json silently replaces invalid UTF-8 and unpaired
	// surrogate escapes with U+FFFD: refuse them here, on the raw bytes.
	if !utf8.Valid(body) || loneSurrogate(body) {
		return ErrInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return Invalid(te.Field, "invalid '"+te.Field+"' type")
		}
		return ErrInvalidBody
	}
	// One JSON value and nothing after it, as FormKiQ's Gson reads it.
	if _, err := dec.Token(); err != io.EOF {
		return ErrInvalidBody
	}
	return nil
}

var ErrInvalidUTF8 = Invalid("", "request body is not valid UTF-8")

// loneSurrogate reports a \uD800-\uDFFF escape that is not a high
// surrogate followed by a low one (JSON escapes only occur in strings, so
// the raw scan needs no parser; a preceding backslash pair is skipped).
func loneSurrogate(b []byte) bool {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := hex4(i)
		if !ok {
			i++ // an escape such as \\ or \"
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if lo, ok := hex4(i + 6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		default:
			i += 5
		}
	}
	return false
}

// ReadFailer is a connection the core's listener wraps (conns.go):
// ReadFailed says a read from it failed, so a body that ended short was
// cut off by the client.
type ReadFailer interface{ ReadFailed() bool }

// ConnOf is the connection of c as the core's listener wrapped it (nil
// for one it did not wrap).
func ConnOf(c *fiber.Ctx) ReadFailer {
	rf, _ := c.Context().Conn().(ReadFailer)
	return rf
}

// drainLimiter is a connection the core's listener wraps (conns.go):
// LimitDrain caps its reads at the drain timeout (Timeouts.Drain).
type drainLimiter interface{ LimitDrain() }

// maxDrain bounds how much of a refused body is read and discarded so the
// client gets the 400 instead of a connection reset; past it, or past
// Timeouts.Drain, the connection is closed.
const maxDrain = 64 << 20

func Drain(c *fiber.Ctx) {
	st := BodyStream(c)
	if st == nil {
		return
	}
	if dl, ok := c.Context().Conn().(drainLimiter); ok {
		dl.LimitDrain()
	}
	// A body left in the socket would be read as the next request.
	if _, err := io.CopyN(io.Discard, st, maxDrain); err != io.EOF {
		c.Context().SetConnectionClose()
	}
}

// BodyStream is the request's streamed body (nil when there is none),
// the same reader for every caller of a request. Once it has failed or
// ended, it keeps answering that error: fasthttp's chunked stream, read
// again after its terminating chunk, waits for another chunk, so draining
// a fully read chunked upload used to hold the request until the client
// gave up.
func BodyStream(c *fiber.Ctx) io.Reader {
	if s, ok := c.Locals(localBody).(*stickyReader); ok {
		return s
	}
	st := c.Context().RequestBodyStream()
	if st == nil {
		return nil
	}
	s := &stickyReader{r: st}
	c.Locals(localBody, s)
	return s
}

type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	s.err = err
	return n, err
}

func DocumentJSON(d *storage.Document) map[string]any {
	m := map[string]any{
		"siteId":           d.SiteID,
		"documentId":       d.DocumentID,
		"path":             d.Path,
		"insertedDate":     FormatDate(d.InsertedDate),
		"lastModifiedDate": FormatDate(d.LastModifiedDate),
		"userId":           d.UserID,
	}
	opt := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	opt("deepLinkPath", d.DeepLinkPath)
	opt("contentType", d.ContentType)
	opt("checksum", d.Checksum)
	opt("checksumType", d.ChecksumType)
	opt("width", d.Width)
	opt("height", d.Height)
	opt("belongsToDocumentId", d.BelongsToDocumentID)
	opt("artifactCategory", d.ArtifactCategory)
	if d.ArtifactOf != "" {
		m["documentId"], m["artifactId"] = d.ArtifactOf, d.DocumentID
	}
	opt("promotedArtifactId", d.PromotedArtifactID)
	if d.ArtifactCount > 0 {
		m["hasArtifacts"] = true
	}
	opt("resourceType", d.ResourceType)
	if d.HasContent {
		m["contentLength"] = d.ContentLength
	}
	if d.DeletedDate != nil {
		m["deletedDate"] = FormatDate(*d.DeletedDate)
	}
	if len(d.Metadata) > 0 {
		m["metadata"] = d.Metadata
	}
	return m
}

// MetadataMap is a document's metadata as the fulltext responses of
// FormKiQ's spec declare it: a map of key to value (a string, or a list
// for several values), not the list of {key, value} of GET /documents.
func MetadataMap(md []storage.Metadata) map[string]any {
	out := make(map[string]any, len(md))
	for _, m := range md {
		if len(m.Values) > 0 {
			out[m.Key] = m.Values
		} else {
			out[m.Key] = m.Value
		}
	}
	return out
}
