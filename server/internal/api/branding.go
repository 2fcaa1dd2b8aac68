package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"mime"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/klauspost/compress/gzip"

	"quire/storage"
)

// Logo is a branding's inline (data: URL) logo as its own file (issue
// 47): the bytes, their image type and a content hash that names this
// version of the logo in its URL (?v=) and its strong ETag.
type Logo struct {
	ContentType string
	Data        []byte
	Hash        string
}

// BrandingLogo decodes b's inline logo; ok is false when b has none (no
// logo, an http(s) URL, or a data: URL that does not decode to an image
// type).
func BrandingLogo(b *storage.Branding) (l Logo, ok bool) {
	if b == nil || !strings.HasPrefix(b.Logo, "data:image/") {
		return Logo{}, false
	}
	head, payload, found := strings.Cut(strings.TrimPrefix(b.Logo, "data:"), ",")
	if !found {
		return Logo{}, false
	}
	params := strings.Split(head, ";")
	b64 := len(params) > 1 && strings.EqualFold(params[len(params)-1], "base64")
	if b64 {
		params = params[:len(params)-1]
	}
	ctype, _, err := mime.ParseMediaType(strings.Join(params, ";"))
	if err != nil || !strings.HasPrefix(ctype, "image/") {
		return Logo{}, false
	}
	var data []byte
	if b64 {
		data, err = base64.StdEncoding.DecodeString(payload)
		if err != nil {
			data, err = base64.RawStdEncoding.DecodeString(payload)
		}
	} else {
		var s string
		s, err = url.PathUnescape(payload)
		data = []byte(s)
	}
	if err != nil || len(data) == 0 {
		return Logo{}, false
	}
	sum := sha256.Sum256(data)
	return Logo{ContentType: ctype, Data: data, Hash: base64.RawURLEncoding.EncodeToString(sum[:16])}, true
}

// LogoPath is where the logo of a branding is served: the global one
// (site "") at /branding/logo, a site's at /sites/{siteId}/branding/logo,
// each with ?v=<hash>; "" when the branding has no inline logo.
func LogoPath(site string, b *storage.Branding) string {
	l, ok := BrandingLogo(b)
	if !ok {
		return ""
	}
	if site == "" {
		return "/branding/logo?v=" + l.Hash
	}
	return "/sites/" + url.PathEscape(site) + "/branding/logo?v=" + l.Hash
}

// BrandingJSON is a branding as the API answers it: an inline logo is
// not repeated (issue 47: it made every configuration answer carry up to
// 256 KB); logoUrl names its file instead, and a client that sends the
// branding back with logo set to that logoUrl keeps the logo
// (KeepLogo). A logo at an http(s) URL stays in logo.
func BrandingJSON(site string, b *storage.Branding) map[string]any {
	if b == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range map[string]string{"title": b.Title, "primaryColor": b.PrimaryColor, "secondaryColor": b.SecondaryColor, "supportEmail": b.SupportEmail} {
		if v != "" {
			out[k] = v
		}
	}
	if p := LogoPath(site, b); p != "" {
		out["logoUrl"] = p
	} else if b.Logo != "" && !strings.HasPrefix(b.Logo, "data:") {
		out["logo"] = b.Logo
	}
	return out
}

// PublicBranding is the part of the global branding a sign-in page may
// show before anyone signs in: the title, the colours and logoUrl.
func PublicBranding(b *storage.Branding) map[string]any {
	out := BrandingJSON("", b)
	delete(out, "supportEmail")
	if len(out) == 0 {
		return nil
	}
	return out
}

// KeepLogo replaces, in a branding about to be stored, a logo given as
// the current logo's own logoUrl (a client sending back what it read)
// with the stored logo.
func KeepLogo(site string, next, cur *storage.Branding) {
	if next == nil || cur == nil || next.Logo == "" {
		return
	}
	if p := LogoPath(site, cur); p != "" && next.Logo == p {
		next.Logo = cur.Logo
	}
}

// acceptsGzip tells whether the request's Accept-Encoding takes gzip
// (a q=0 refuses it).
func acceptsGzip(c *fiber.Ctx) bool {
	for _, part := range strings.Split(c.Get(fiber.HeaderAcceptEncoding), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") && strings.TrimSpace(name) != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// CompressedJSON answers v as JSON, gzip-compressed when the client
// accepts it (Vary: Accept-Encoding either way).
func CompressedJSON(c *fiber.Ctx, v any) error {
	body, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	c.Vary(fiber.HeaderAcceptEncoding)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	if !acceptsGzip(c) {
		return c.Send(body)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if _, err := zw.Write(body); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentEncoding, "gzip")
	return c.Send(buf.Bytes())
}
