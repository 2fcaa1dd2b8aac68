package documents

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/h2non/filetype"

	"quire/server/content"
	"quire/server/internal/api"
	"quire/storage"
)

// maxInlineContent is FormKiQ's limit for content sent in the JSON body.
const maxInlineContent = 5 * 1000 * 1000

// FlexString accepts a JSON string or number (FormKiQ sends width and
// height as strings, clients often send numbers).
type FlexString struct {
	Set bool   `json:"-"`
	V   string `json:"-"`
}

func (f *FlexString) UnmarshalJSON(b []byte) error {
	f.Set = true
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &f.V)
	}
	if string(b) == "null" {
		f.Set = false
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	f.V = n.String()
	return nil
}

type TagIn struct {
	Key    *string  `json:"key"`
	Value  *string  `json:"value"`
	Values []string `json:"values"`
}

type metadataIn struct {
	Key    string   `json:"key"`
	Value  *string  `json:"value"`
	Values []string `json:"values"`
}

type ActionIn struct {
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters"`
	QueueID    string          `json:"queueId"`
}

// documentIn is the body of POST /documents, PATCH /documents/{id} and a
// child document. Fields that only some of them accept are checked by the
// caller.
type documentIn struct {
	DocumentID       *string                  `json:"documentId"`
	Artifacts        bool                     `json:"artifacts"`
	ArtifactCategory *string                  `json:"artifactCategory"`
	Path             *string                  `json:"path"`
	ChecksumType     string                   `json:"checksumType"`
	Checksum         string                   `json:"checksum"`
	Width            FlexString               `json:"width"`
	Height           FlexString               `json:"height"`
	DeepLinkPath     *string                  `json:"deepLinkPath"`
	ResourceType     string                   `json:"resourceType"`
	ContentType      *string                  `json:"contentType"`
	IsBase64         bool                     `json:"isBase64"`
	Content          *string                  `json:"content"`
	Tags             []TagIn                  `json:"tags"`
	Metadata         []metadataIn             `json:"metadata"`
	Actions          []ActionIn               `json:"actions"`
	Attributes       []storage.AttributeInput `json:"attributes"`
	Documents        []documentIn             `json:"documents"`
}

// childResult is an element of the "documents" array of AddDocumentResponse.
type childResult struct {
	DocumentID string            `json:"documentId"`
	UploadURL  string            `json:"uploadUrl,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
}

type addDocumentResponse struct {
	DocumentID string            `json:"documentId"`
	ArtifactID string            `json:"artifactId,omitempty"`
	SiteID     string            `json:"siteId"`
	UploadURL  string            `json:"uploadUrl,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	Documents  []childResult     `json:"documents,omitempty"`
}

// prepared is a validated document ready to become a storage.NewDocument.
type prepared struct {
	nd      storage.NewDocument
	content []byte // decoded inline content, nil when none
	hasBody bool   // content was given (possibly empty)
}

// HandleAddDocument serves POST /documents.
func (s *Handlers) HandleAddDocument(r *api.Request) error {
	var in documentIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); errors.Is(err, api.ErrNoBody) {
		return api.ErrBodyRequired
	} else if err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if r.Public {
		// Anyone may post here: no actions (they act with the adder's
		// rights and reach out to other services) and content required.
		if len(in.Actions) > 0 || slices.ContainsFunc(in.Documents, func(d documentIn) bool { return len(d.Actions) > 0 }) {
			return api.Invalid("actions", "'actions' are not accepted on public documents")
		}
		if in.Content == nil {
			return api.Invalid("content", "'content' is required")
		}
		if in.Artifacts {
			return api.Invalid("artifacts", "artifacts cannot be added to documents through public documents")
		}
	}
	if in.Artifacts {
		return s.addArtifact(r, &in)
	}
	id := ""
	if in.DocumentID != nil {
		id = *in.DocumentID
		if !api.IsUUIDv4(id) {
			return api.Invalid("documentId", fmt.Sprintf("invalid documentId '%s'", id))
		}
	} else {
		id = r.NewID()
	}
	if in.Content == nil && len(in.Documents) == 0 && in.DeepLinkPath == nil && in.ResourceType != storage.ResourceDossier {
		errs = append(errs, storage.ValidationItem{Msg: "either 'content', 'documents', or 'deepLinkPath' are required"})
	}
	if len(in.Documents) > storage.MaxChildDocuments {
		// Refused before preparing thousands of children for nothing.
		return api.CheckErrors(storage.CheckNewDocuments(make([]storage.NewDocument, len(in.Documents)+1)))
	}
	parent, perrs := s.prepareDocument(r, &in, id, "")
	errs = append(errs, perrs...)
	docs := []*prepared{parent}
	for i := range in.Documents {
		ch := &in.Documents[i]
		cp, cerrs := s.prepareDocument(r, ch, r.NewID(), id)
		errs = append(errs, cerrs...)
		docs = append(docs, cp)
		parent.nd.Document.Children = append(parent.nd.Document.Children, cp.nd.Document.DocumentID)
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	payload := storage.AddDocuments{Docs: make([]storage.NewDocument, len(docs))}
	for i, p := range docs {
		payload.Docs[i] = p.nd
	}
	// The limits of the request as a whole, before any content is written
	// (the applier checks them again).
	if err := api.CheckErrors(storage.CheckNewDocuments(payload.Docs)); err != nil {
		return err
	}
	if err := s.checkInlineSize(r, docs...); err != nil {
		return err
	}
	for i, p := range docs {
		if err := s.attachInline(r, p); err != nil {
			return err
		}
		payload.Docs[i] = p.nd
	}
	if err := s.RequireWritePaths(r, payload.Docs); err != nil {
		return err
	}
	// A client-chosen documentId that exists is a 409, as FormKiQ answers,
	// also for the same body again: a client that retries sends an
	// Idempotency-Key, which answers the first create (API.md).
	res, err := s.Apply(r, storage.OpAddDocuments, payload)
	if err != nil {
		return err
	}
	// A repeated request (Idempotency-Key) answers the first request's
	// documents: the ids come from the result, in the request's order.
	ids := make([]string, len(docs))
	for i, p := range docs {
		ids[i] = p.nd.Document.DocumentID
	}
	if ar, _ := res.Value.(*storage.AddDocumentsResult); ar != nil && len(ar.DocumentIDs) == len(ids) {
		ids = ar.DocumentIDs
	}
	id = ids[0]
	resp := addDocumentResponse{DocumentID: id, SiteID: r.Site}
	if !parent.hasBody && parent.nd.Document.ResourceType == storage.ResourceDocument && parent.nd.Document.DeepLinkPath == "" {
		resp.UploadURL, resp.Headers = s.UploadURL(r.Site, id, api.UploadOpts{Base: s.LinkBase(r.Ctx)})
	}
	for i, p := range docs[1:] {
		cr := childResult{DocumentID: ids[i+1]}
		if !p.hasBody && p.nd.Document.DeepLinkPath == "" && p.nd.Document.ResourceType == storage.ResourceDocument {
			cr.UploadURL, cr.Headers = s.UploadURL(r.Site, cr.DocumentID, api.UploadOpts{Base: s.LinkBase(r.Ctx)})
		}
		resp.Documents = append(resp.Documents, cr)
	}
	return r.Status(http.StatusCreated).JSON(resp)
}

// prepareDocument validates one document of a request and builds its
// storage form. Inline content is decoded and checked against checksum.
func (s *Handlers) prepareDocument(r *api.Request, in *documentIn, id, parent string) (*prepared, []storage.ValidationItem) {
	var errs []storage.ValidationItem
	add := func(key, msg string) { errs = append(errs, storage.ValidationItem{Key: key, Msg: msg}) }
	p := &prepared{}
	d := &p.nd.Document
	d.DocumentID, d.BelongsToDocumentID = id, parent
	if in.ArtifactCategory != nil {
		d.ArtifactCategory = *in.ArtifactCategory
		errs = append(errs, storage.CheckText("artifactCategory", d.ArtifactCategory, storage.MaxKeyBytes)...)
	}
	if in.Artifacts && parent != "" {
		add("artifacts", "a child document cannot be an artifact")
	}
	if in.Content != nil && in.DeepLinkPath != nil {
		add("", "both 'content', and 'deepLinkPath' cannot be set")
	}
	d.ResourceType = strings.ToUpper(in.ResourceType)
	switch d.ResourceType {
	case "":
		d.ResourceType = storage.ResourceDocument
		if in.DeepLinkPath != nil {
			d.ResourceType = storage.ResourceDeepLink
		}
	case storage.ResourceDocument, storage.ResourceDossier, storage.ResourceDeepLink:
	default:
		add("resourceType", "invalid resourceType '"+in.ResourceType+"'")
	}
	if in.DeepLinkPath != nil {
		d.DeepLinkPath = *in.DeepLinkPath
		if strings.TrimSpace(d.DeepLinkPath) == "" {
			add("deepLinkPath", "'deepLinkPath' is required")
		} else if !ValidDeepLink(d.DeepLinkPath) {
			add("deepLinkPath", fmt.Sprintf("DeepLinkPath '%s' is not a valid URL", strings.ToValidUTF8(d.DeepLinkPath, "?")))
		}
	}
	for _, wh := range []struct {
		name string
		f    FlexString
		dst  *string
	}{{"width", in.Width, &d.Width}, {"height", in.Height, &d.Height}} {
		if !wh.f.Set {
			continue
		}
		if _, err := strconv.ParseFloat(wh.f.V, 64); err != nil && wh.f.V != "auto" {
			add(wh.name, fmt.Sprintf("invalid '%s' must be numeric or 'auto'", wh.name))
		}
		*wh.dst = wh.f.V
	}
	if in.ContentType != nil {
		d.ContentType = *in.ContentType
	}
	pth := ""
	if in.Path != nil {
		errs = append(errs, storage.CheckPath("path", *in.Path)...)
		pth = NormalizePath(*in.Path)
	}
	if pth == "" && d.DeepLinkPath != "" {
		pth = deepLinkName(d.DeepLinkPath)
	}
	if pth == "" {
		pth = id
	}
	if strings.ContainsRune(pth, 0) {
		add("path", "invalid 'path'")
	}
	d.Path = pth
	d.ChecksumType = strings.ToUpper(in.ChecksumType)
	if in.Checksum != "" && d.ChecksumType == "" {
		add("checksumType", "'checksumType' required when 'checksum' is set")
	}
	if d.ChecksumType != "" && content.NewHash(d.ChecksumType) == nil {
		add("checksumType", "invalid 'checksumType'")
	} else if in.Checksum != "" && d.ChecksumType != "" && !content.ChecksumFormat(d.ChecksumType, in.Checksum) {
		add("checksum", "invalid checksum")
	}
	if in.Content != nil {
		p.hasBody = true
		raw := []byte(*in.Content)
		if in.IsBase64 {
			dec, err := base64.StdEncoding.DecodeString(*in.Content)
			if err != nil {
				add("content", "invalid base64 content")
			}
			raw = dec
		}
		if len(raw) >= maxInlineContent {
			add("content", "'content' must be less than 5 MB, use POST /documents/upload")
		}
		p.content = raw
		if h := content.NewHash(d.ChecksumType); h != nil && len(errs) == 0 {
			h.Write(raw)
			sum := hex.EncodeToString(h.Sum(nil))
			if in.Checksum != "" && !content.ChecksumEqual(in.Checksum, h.Sum(nil)) {
				add("checksum", "invalid checksum")
			}
			d.Checksum = sum
		}
	}
	tags, terrs := ConvertTags(in.Tags, "tags")
	errs = append(errs, terrs...)
	p.nd.Tags = tags
	md, merrs := convertMetadata(in.Metadata)
	errs = append(errs, merrs...)
	d.Metadata = md
	acts, aerrs := s.ConvertActions(r, in.Actions)
	errs = append(errs, aerrs...)
	p.nd.Actions = acts
	// A request without "actions" gets the site's default processing
	// (API.md "Default processing"); "actions": [] asks for none.
	p.nd.DefaultActions = in.Actions == nil
	errs = append(errs, checkAttributeInputs(in.Attributes, "attributes")...)
	p.nd.Attributes = in.Attributes
	if parent != "" && len(in.Documents) > 0 {
		add("documents", "child documents cannot have child documents")
	}
	return p, errs
}

// checkInlineSize refuses inline content over the site's
// maxContentLengthBytes before any of it is written (the applier checks
// again, in the transaction).
func (s *Handlers) checkInlineSize(r *api.Request, docs ...*prepared) error {
	c, err := s.DB.SiteConfig(r.Site)
	if err != nil {
		return err
	}
	for _, p := range docs {
		if l := c.ContentLimit(); l > 0 && p.hasBody && int64(len(p.content)) > l {
			return storage.ContentTooLarge(l)
		}
	}
	return nil
}

// attachInline chunks a prepared document's inline content: a small one
// goes into the command itself, a larger one is written first.
func (s *Handlers) attachInline(r *api.Request, p *prepared) error {
	if !p.hasBody {
		return nil
	}
	d := &p.nd.Document
	if d.ContentType == "" {
		d.ContentType = DetectContentType(p.content)
	}
	if m, tail, ok := storage.SmallContent(p.content); ok {
		p.nd.Content, p.nd.Chunks = &m, tail
		return nil
	}
	m, tail, err := storage.WriteContent(r.UserContext(), s.Deps.Applier, bytes.NewReader(p.content), 0, nil)
	if err != nil {
		return err
	}
	p.nd.Content, p.nd.Chunks = &m, tail
	return nil
}

// DetectContentType sniffs binary signatures; anything else is
// application/octet-stream, as FormKiQ stores it.
func DetectContentType(head []byte) string {
	if len(head) > 8192 {
		head = head[:8192]
	}
	if kind, err := filetype.Match(head); err == nil && kind != filetype.Unknown && kind.MIME.Value != "" {
		return kind.MIME.Value
	}
	return "application/octet-stream"
}

func ConvertTags(in []TagIn, field string) ([]storage.Tag, []storage.ValidationItem) {
	if len(in) > storage.MaxTagsPerRequest {
		return nil, storage.CheckTags(field, make([]storage.Tag, len(in)))
	}
	var errs []storage.ValidationItem
	var out []storage.Tag
	seen := map[string]bool{}
	for _, t := range in {
		if t.Key == nil || strings.TrimSpace(*t.Key) == "" {
			errs = append(errs, storage.ValidationItem{Key: field, Msg: "'key' is required"})
			continue
		}
		k := *t.Key
		if strings.ContainsAny(k, "\x00") {
			errs = append(errs, storage.ValidationItem{Key: field, Msg: "invalid key '" + k + "'"})
			continue
		}
		if t.Value != nil && len(t.Values) > 0 {
			errs = append(errs, storage.ValidationItem{Key: field, Msg: "'value' and 'values' cannot both be set"})
			continue
		}
		if seen[k] {
			errs = append(errs, storage.ValidationItem{Key: field, Msg: "duplicate tag key '" + k + "'"})
			continue
		}
		seen[k] = true
		tg := storage.Tag{Key: k}
		if t.Value != nil {
			tg.Value = *t.Value
		}
		tg.Values = append([]string(nil), t.Values...)
		out = append(out, tg)
	}
	if len(errs) == 0 {
		errs = storage.CheckTags(field, out)
	}
	return out, errs
}

func convertMetadata(in []metadataIn) ([]storage.Metadata, []storage.ValidationItem) {
	var errs []storage.ValidationItem
	if len(in) > storage.MaxMetadata {
		return nil, []storage.ValidationItem{{Key: "metadata", Msg: fmt.Sprintf("maximum number of metadata is %d", storage.MaxMetadata)}}
	}
	var out []storage.Metadata
	for _, m := range in {
		if strings.TrimSpace(m.Key) == "" {
			errs = append(errs, storage.ValidationItem{Key: "metadata", Msg: "'key' is required"})
			continue
		}
		e := storage.Metadata{Key: m.Key}
		size := len(m.Key)
		if m.Value != nil {
			e.Value = *m.Value
			size += len(e.Value)
		}
		if len(m.Values) > 0 {
			e.Values = append([]string(nil), m.Values...)
			sort.Strings(e.Values)
			for _, v := range m.Values {
				size += len(v)
			}
		}
		if size > storage.MaxMetadataBytes {
			errs = append(errs, storage.ValidationItem{Key: "metadata." + m.Key, Msg: "value cannot exceed 1000 characters"})
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, errs
}

// NormalizePath strips leading slashes and empty segments: "/a//b.txt"
// becomes "a/b.txt".
func NormalizePath(p string) string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

// ValidDeepLink accepts an absolute http or https URL with a host and no
// control characters (url.Parse refuses those): a deep link is shown to
// users as a link, so javascript: and other schemes are refused.
func ValidDeepLink(link string) bool {
	if len(link) > storage.MaxURLBytes || storage.CheckText("", link, storage.MaxURLBytes) != nil {
		return false
	}
	u, err := url.Parse(link)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// deepLinkName is the file name of a deep link: the last path segment.
func deepLinkName(link string) string {
	if u, err := url.Parse(link); err == nil && u.Path != "" {
		link = u.Path
	}
	return path.Base(strings.TrimRight(link, "/"))
}
