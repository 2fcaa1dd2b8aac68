package api

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

// DefaultURLDuration is how long signed URLs stay valid unless the request
// says otherwise (FormKiQ: 48 hours).
const DefaultURLDuration = 48 * time.Hour

// UploadOpts are the constraints signed into an upload URL.
type UploadOpts struct {
	ChecksumType  string // SHA1, SHA256, SHA512
	Checksum      string // hex or base64, as the client gave it
	ContentLength int64  // exact size, 0 = any
	Duration      time.Duration
	// base is the URL's base (LinkBase of the request; default PublicURL).
	Base string
}

// UploadURL returns a signed, expiring URL that accepts a streamed PUT of
// the document's content, and the headers the client must send with it.
func (s *Env) UploadURL(site, doc string, o UploadOpts) (string, map[string]string) {
	if o.Duration <= 0 {
		o.Duration = DefaultURLDuration
	}
	exp := strconv.FormatInt(s.Now().Add(o.Duration).Unix(), 10)
	cl := ""
	if o.ContentLength > 0 {
		cl = strconv.FormatInt(o.ContentLength, 10)
	}
	sig := auth.SignURL(s.Deps.Auth.URLKey(), http.MethodPut, site, doc, exp, o.ChecksumType, o.Checksum, cl)
	q := url.Values{}
	q.Set("expires", exp)
	if o.ChecksumType != "" {
		q.Set("checksumType", o.ChecksumType)
		q.Set("checksum", o.Checksum)
	}
	if cl != "" {
		q.Set("contentLength", cl)
	}
	q.Set("signature", sig)
	base := o.Base
	if base == "" {
		base = s.Deps.PublicURL
	}
	u := fmt.Sprintf("%s/uploads/%s/%s?%s", base, url.PathEscape(site), doc, q.Encode())
	var headers map[string]string
	if o.ChecksumType != "" {
		headers = map[string]string{
			"x-amz-checksum-" + strings.ToLower(o.ChecksumType): toBase64Checksum(o.Checksum),
			"x-amz-sdk-checksum-algorithm":                      o.ChecksumType,
		}
	}
	return u, headers
}

// DownloadURL returns a signed URL downloading a document's content (as
// an attachment), valid for d.
func (s *Env) DownloadURL(site, doc string, d time.Duration) string {
	return s.SignDownloadURL(s.Deps.PublicURL, site, doc, false, false, d)
}

// BypassField is the signed field of a download URL that serves a
// watermarked document unstamped (API.md "Watermarks"); a version key
// never holds ':'.
const BypassField = "wm:bypass"

// SignDownloadURL returns a signed, expiring URL that streams the content;
// with bypass, unstamped.
func (s *Env) SignDownloadURL(base, site, doc string, inline, bypass bool, d time.Duration) string {
	if d <= 0 {
		d = DefaultURLDuration
	}
	return s.signDownloadURLUntil(base, site, doc, inline, bypass, s.Now().Add(d))
}

// signDownloadURLUntil is SignDownloadURL of a URL valid until until.
func (s *Env) signDownloadURLUntil(base, site, doc string, inline, bypass bool, until time.Time) string {
	exp := strconv.FormatInt(until.Unix(), 10)
	in := strconv.FormatBool(inline)
	fields := []string{http.MethodGet, site, doc, exp, in}
	q := url.Values{"expires": {exp}, "inline": {in}}
	if bypass {
		fields = append(fields, BypassField)
		q.Set("bypassWatermark", "true")
	}
	q.Set("signature", auth.SignURL(s.Deps.Auth.URLKey(), fields...))
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

func CheckURLExpiry(now time.Time, exp string) error {
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if now.Unix() > n {
		return ErrStatus(http.StatusForbidden, "Request has expired")
	}
	return nil
}

type UrlResponse struct {
	DocumentID string            `json:"documentId"`
	ArtifactID string            `json:"artifactId,omitempty"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
}
