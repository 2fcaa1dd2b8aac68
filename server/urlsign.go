package server

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"quire/auth"
)

// defaultURLDuration is how long signed URLs stay valid unless the request
// says otherwise (FormKiQ: 48 hours).
const defaultURLDuration = 48 * time.Hour

// uploadOpts are the constraints signed into an upload URL.
type uploadOpts struct {
	checksumType  string // SHA1, SHA256, SHA512
	checksum      string // hex or base64, as the client gave it
	contentLength int64  // exact size, 0 = any
	duration      time.Duration
	// base is the URL's base (linkBase of the request; default PublicURL).
	base string
}

// uploadURL returns a signed, expiring URL that accepts a streamed PUT of
// the document's content, and the headers the client must send with it.
func (s *env) uploadURL(site, doc string, o uploadOpts) (string, map[string]string) {
	if o.duration <= 0 {
		o.duration = defaultURLDuration
	}
	exp := strconv.FormatInt(s.now().Add(o.duration).Unix(), 10)
	cl := ""
	if o.contentLength > 0 {
		cl = strconv.FormatInt(o.contentLength, 10)
	}
	sig := auth.SignURL(s.auth.URLKey(), http.MethodPut, site, doc, exp, o.checksumType, o.checksum, cl)
	q := url.Values{}
	q.Set("expires", exp)
	if o.checksumType != "" {
		q.Set("checksumType", o.checksumType)
		q.Set("checksum", o.checksum)
	}
	if cl != "" {
		q.Set("contentLength", cl)
	}
	q.Set("signature", sig)
	base := o.base
	if base == "" {
		base = s.publicURL
	}
	u := fmt.Sprintf("%s/uploads/%s/%s?%s", base, url.PathEscape(site), doc, q.Encode())
	var headers map[string]string
	if o.checksumType != "" {
		headers = map[string]string{
			"x-amz-checksum-" + strings.ToLower(o.checksumType): toBase64Checksum(o.checksum),
			"x-amz-sdk-checksum-algorithm":                      o.checksumType,
		}
	}
	return u, headers
}

// DownloadURL returns a signed URL downloading a document's content (as
// an attachment), valid for d.
func (s *env) DownloadURL(site, doc string, d time.Duration) string {
	return s.downloadURL(s.publicURL, site, doc, false, false, d)
}

// bypassField is the signed field of a download URL that serves a
// watermarked document unstamped (API.md "Watermarks"); a version key
// never holds ':'.
const bypassField = "wm:bypass"

// downloadURL returns a signed, expiring URL that streams the content;
// with bypass, unstamped.
func (s *env) downloadURL(base, site, doc string, inline, bypass bool, d time.Duration) string {
	if d <= 0 {
		d = defaultURLDuration
	}
	exp := strconv.FormatInt(s.now().Add(d).Unix(), 10)
	in := strconv.FormatBool(inline)
	fields := []string{http.MethodGet, site, doc, exp, in}
	q := url.Values{"expires": {exp}, "inline": {in}}
	if bypass {
		fields = append(fields, bypassField)
		q.Set("bypassWatermark", "true")
	}
	q.Set("signature", auth.SignURL(s.auth.URLKey(), fields...))
	return fmt.Sprintf("%s/downloads/%s/%s?%s", base, url.PathEscape(site), doc, q.Encode())
}

// toBase64Checksum turns a hex checksum into the base64 form S3-style
// checksum headers use; a base64 one is returned as is.
func toBase64Checksum(c string) string {
	if b, err := hex.DecodeString(c); err == nil {
		return base64.StdEncoding.EncodeToString(b)
	}
	return c
}

func checkURLExpiry(now time.Time, exp string) error {
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return errStatus(http.StatusForbidden, "invalid signature")
	}
	if now.Unix() > n {
		return errStatus(http.StatusForbidden, "Request has expired")
	}
	return nil
}

type urlResponse struct {
	DocumentID string            `json:"documentId"`
	ArtifactID string            `json:"artifactId,omitempty"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
}
