package signatures

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"quire/pipeline/pdfwork"
	"quire/server/internal/api"
	"quire/storage"
)

// Document generation limits (API.md "Document generation").
const (
	maxTemplateBytes   = 20 << 20 // a template's content
	maxDataSourceBytes = 1 << 20  // one data source document (JSON)
	maxDataSources     = 10
	maxInsertDocuments = 20
	maxAppendBytes     = 100 << 20 // one PDF to append
)

// docIDsOf lists the documents a generation reads besides its template
// (an artifact's document stands for the artifact).
func docIDsOf(in generateIn) []string {
	var ids []string
	for _, ds := range in.Datasources {
		ids = append(ids, ds.DocumentID)
	}
	for _, ins := range in.InsertDocuments {
		ids = append(ids, ins.DocumentID)
	}
	return ids
}

type generateIn struct {
	Datasources []struct {
		Name       string `json:"name"`
		DocumentID string `json:"documentId"`
		ArtifactID string `json:"artifactId"`
		DataRoot   string `json:"dataRoot"`
	} `json:"datasources"`
	InsertDocuments []struct {
		Position   string `json:"position"`
		DocumentID string `json:"documentId"`
		ArtifactID string `json:"artifactId"`
	} `json:"insertDocuments"`
	OutputType       string `json:"outputType"`
	SaveAsDocumentID string `json:"saveAsDocumentId"`
	Path             string `json:"path"`
	SaveAsArtifact   bool   `json:"saveAsArtifact"`
	SaveAsArtifactID string `json:"saveAsArtifactId"`
	ArtifactCategory string `json:"artifactCategory"`
	Locale           any    `json:"locale"`
}

// templateKind is the template kind of a document's content, "" when it
// is not one.
func templateKind(d *storage.Document) string {
	ct, ext := strings.ToLower(d.ContentType), strings.ToLower(path.Ext(d.Path))
	switch {
	case strings.Contains(ct, "wordprocessingml.document") || ext == ".docx":
		return pdfwork.TemplateDOCX
	case strings.Contains(ct, "opendocument.text") || ext == ".odt":
		return pdfwork.TemplateODT
	case ct == "application/pdf" || ct == "" && ext == ".pdf":
		return pdfwork.TemplatePDF
	}
	return ""
}

// HandleGenerateDocument serves POST /documents/{id}/generate: the
// document (or artifact) is the template.
func (s *Handlers) HandleGenerateDocument(r *api.Request) error {
	var in generateIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	fail := func(k, m string) { errs = append(errs, storage.ValidationItem{Key: k, Msg: m}) }
	out := strings.ToUpper(in.OutputType) // "" until the source's kind is known
	if out != "" && out != "DOCX" && out != "PDF" {
		fail("outputType", "invalid 'outputType', use DOCX or PDF")
	}
	if len(in.Datasources) > maxDataSources {
		fail("datasources", fmt.Sprintf("at most %d datasources", maxDataSources))
	}
	if len(in.InsertDocuments) > maxInsertDocuments {
		fail("insertDocuments", fmt.Sprintf("at most %d insertDocuments", maxInsertDocuments))
	}
	for i, d := range in.InsertDocuments {
		if d.Position != "APPEND" && d.Position != "PREPEND" {
			fail(fmt.Sprintf("insertDocuments[%d].position", i), "invalid 'position', use APPEND or PREPEND")
		}
		if d.DocumentID == "" {
			fail(fmt.Sprintf("insertDocuments[%d].documentId", i), "'documentId' is required")
		}
	}
	if len(in.InsertDocuments) > 0 && out == "DOCX" {
		fail("insertDocuments", "'insertDocuments' needs outputType PDF")
	}
	for i, d := range in.Datasources {
		if d.DocumentID == "" {
			fail(fmt.Sprintf("datasources[%d].documentId", i), "'documentId' is required")
		}
	}
	toArtifact := in.SaveAsArtifact || in.SaveAsArtifactID != ""
	if toArtifact && in.SaveAsDocumentID != "" {
		fail("saveAsDocumentId", "'saveAsDocumentId' and an artifact target exclude each other")
	}
	if in.SaveAsDocumentID != "" && !api.IsUUIDv4(in.SaveAsDocumentID) {
		fail("saveAsDocumentId", "invalid 'saveAsDocumentId'")
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	tmpl, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	// A PDF source document is package generation (SERVICE-SPEC.md §4.5):
	// the inserted PDFs and images go before and after it; it has no
	// placeholders, so data sources are refused rather than ignored.
	pdfSource := templateKind(tmpl) == pdfwork.TemplatePDF
	switch {
	case pdfSource && out == "":
		out = "PDF"
	case out == "":
		out = "DOCX"
	}
	if pdfSource {
		switch {
		case out != "PDF":
			return api.Invalid("outputType", "a PDF source document generates a PDF: use outputType PDF")
		case len(in.Datasources) > 0:
			return api.Invalid("datasources", "a PDF source document has no placeholders: 'datasources' needs a DOCX or ODT template")
		case len(in.InsertDocuments) == 0:
			return api.Invalid("insertDocuments", "a PDF source document needs 'insertDocuments' (package generation)")
		}
	} else if len(in.InsertDocuments) > 0 && out != "PDF" {
		return api.Invalid("insertDocuments", "'insertDocuments' needs outputType PDF")
	}
	// Folder permissions (issue 29): READ on every document read, WRITE
	// where the output goes. They are checked here, before the engines
	// run, and the write target again by the applier when the output is
	// written (Writer), so a change meanwhile cannot widen them.
	for _, ds := range in.Datasources {
		if err := s.RequireDocOf(r, ds.DocumentID, storage.FolderRead); err != nil {
			return err
		}
	}
	for _, ins := range in.InsertDocuments {
		if err := s.RequireDocOf(r, ins.DocumentID, storage.FolderRead); err != nil {
			return err
		}
	}
	// The output is a new document nobody stamps.
	for _, id := range append(docIDsOf(in), tmpl.DocumentID) {
		if err := s.Content.RequireGovernIfMarked(r, id); err != nil {
			return err
		}
	}
	target := in.Path
	if target == "" {
		target = tmpl.Path // the default output goes beside the template
	}
	if in.SaveAsDocumentID != "" {
		if d, err := s.DB.GetDocumentAny(r.Site, in.SaveAsDocumentID); err == nil {
			target = d.Path
			if d.ArtifactOf != "" {
				return api.Invalid("saveAsDocumentId", "invalid 'saveAsDocumentId': it is an artifact")
			}
		}
	}
	if !toArtifact {
		if err := s.RequireDocPath(r, target, storage.FolderWrite); err != nil {
			return err
		}
	}
	writer := s.ActorOf(r)
	kind := templateKind(tmpl)
	if kind == "" {
		return api.Invalid("documentId", fmt.Sprintf("unsupported template type '%s': use a DOCX or ODT document, or a PDF to insert documents around", tmpl.ContentType))
	}
	if pdfSource && tmpl.ContentLength > maxAppendBytes {
		return api.Invalid("documentId", fmt.Sprintf("the PDF source document is over %d MiB", maxAppendBytes>>20))
	}
	if !pdfSource && tmpl.ContentLength > maxTemplateBytes {
		return api.Invalid("documentId", fmt.Sprintf("the template is over %d MiB", maxTemplateBytes>>20))
	}
	data, err := s.generateData(r, tmpl, &in)
	if err != nil {
		return err
	}
	tr, _, err := s.DB.OpenContent(r.Site, tmpl.DocumentID)
	if err != nil {
		return err
	}
	defer tr.Close()
	req := pdfwork.GenerateRequest{Template: tr, Kind: kind, Data: data, PDF: out == "PDF"}
	for i, ins := range in.InsertDocuments {
		id := ins.DocumentID
		if ins.ArtifactID != "" {
			a, err := s.DB.GetArtifact(r.Site, ins.DocumentID, ins.ArtifactID)
			if err != nil {
				return api.Invalid(fmt.Sprintf("insertDocuments[%d].artifactId", i), err.Error())
			}
			id = a.DocumentID
		}
		rd, d, err := s.DB.OpenContent(r.Site, id)
		if err != nil {
			return api.Invalid(fmt.Sprintf("insertDocuments[%d].documentId", i), fmt.Sprintf("document '%s' has no content to append", ins.DocumentID))
		}
		defer rd.Close()
		image := d.ContentType == "image/png" || d.ContentType == "image/jpeg"
		if d.ContentLength > maxAppendBytes || (!strings.Contains(d.ContentType, "pdf") && !image) {
			return api.Invalid(fmt.Sprintf("insertDocuments[%d].documentId", i), fmt.Sprintf("document '%s' is not a PDF, PNG or JPEG under %d MiB", ins.DocumentID, maxAppendBytes>>20))
		}
		req.Inserts = append(req.Inserts, pdfwork.Insert{R: rd, Image: image, Prepend: ins.Position == "PREPEND"})
	}
	g, err := s.Deps.Pipeline.Generate(r.UserContext(), req)
	var ge *pdfwork.GenerateError
	if errors.As(err, &ge) {
		return api.Invalid("documentId", ge.Msg)
	}
	if err != nil {
		if r.UserContext().Err() != nil {
			return err
		}
		s.Log.Warn("document generation failed", "requestId", api.RequestID(r.Ctx), "err", err)
		return api.ErrStatus(http.StatusServiceUnavailable, "document generation is not available on this server now")
	}
	defer g.Close()
	m, tail, err := storage.WriteContent(r.UserContext(), s.Deps.Applier, g, 0, nil)
	if err != nil {
		return err
	}
	ct := g.ContentType
	parent := r.PathDocID()
	switch {
	case in.SaveAsArtifactID != "":
		a, err := s.DB.GetArtifact(r.Site, parent, in.SaveAsArtifactID)
		if err != nil {
			return err
		}
		upd := storage.UpdateDocument{DocumentID: a.DocumentID, Content: &m, Chunks: tail, ContentType: &ct, Writer: writer}
		if _, err := s.Apply(r, storage.OpUpdateDocument, upd); err != nil {
			return err
		}
		return r.Status(http.StatusCreated).JSON(map[string]any{"documentId": parent, "artifactId": a.DocumentID})
	case toArtifact:
		id := r.NewID()
		cat := in.ArtifactCategory
		if cat == "" {
			cat = "GENERATED"
		}
		art := storage.Document{DocumentID: id, ContentType: ct, ArtifactCategory: cat, UserID: r.User()}
		if _, err := s.Apply(r, storage.OpAddArtifact, storage.AddArtifact{DocumentID: parent,
			Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}, Writer: writer}); err != nil {
			return err
		}
		return r.Status(http.StatusCreated).JSON(map[string]any{"documentId": parent, "artifactId": id})
	}
	id := in.SaveAsDocumentID
	if id != "" {
		if _, err := s.DB.GetDocument(r.Site, id); err == nil {
			upd := storage.UpdateDocument{DocumentID: id, Content: &m, Chunks: tail, ContentType: &ct, Writer: writer, DefaultActions: true}
			if _, err := s.Apply(r, storage.OpUpdateDocument, upd); err != nil {
				return err
			}
			return r.Status(http.StatusCreated).JSON(map[string]any{"documentId": id})
		} else if !api.IsNotFound(err) {
			return err
		}
	} else {
		id = r.NewID()
	}
	p := in.Path
	if p == "" {
		p = strings.TrimSuffix(tmpl.Path, path.Ext(tmpl.Path)) + "-generated" + g.Ext
		if tmpl.Path == "" {
			p = ""
		}
	}
	// A generated document gets the site's default processing (API.md
	// "Default processing"): its request names no actions.
	nd := storage.NewDocument{Document: storage.Document{DocumentID: id, Path: p, ContentType: ct, UserID: r.User()}, Content: &m, Chunks: tail, DefaultActions: true}
	if _, err := s.Apply(r, storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{nd}, Writer: writer}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"documentId": id})
}

// generateData is the placeholder values: the template's attributes
// (first value of each), then each data source's `dataRoot` object
// (default "data"), later ones winning; nested objects give dotted keys.
func (s *Handlers) generateData(r *api.Request, tmpl *storage.Document, in *generateIn) (map[string]string, error) {
	data := map[string]string{}
	attrs, _, err := s.DB.DocAttributes(r.Site, tmpl.DocumentID, "", 0)
	if err != nil {
		return nil, err
	}
	for _, a := range attrs {
		switch {
		case len(a.Strings) > 0:
			data[a.Key] = a.Strings[0]
		case len(a.Numbers) > 0:
			data[a.Key] = storage.FormatNumber(a.Numbers[0])
		case a.Boolean != nil:
			data[a.Key] = strconv.FormatBool(*a.Boolean)
		}
	}
	for i, ds := range in.Datasources {
		key := fmt.Sprintf("datasources[%d]", i)
		id := ds.DocumentID
		if ds.ArtifactID != "" {
			a, err := s.DB.GetArtifact(r.Site, ds.DocumentID, ds.ArtifactID)
			if err != nil {
				return nil, api.Invalid(key+".artifactId", err.Error())
			}
			id = a.DocumentID
		}
		rd, d, err := s.DB.OpenContent(r.Site, id)
		if err != nil {
			return nil, api.Invalid(key+".documentId", fmt.Sprintf("document '%s' has no content", ds.DocumentID))
		}
		if d.ContentLength > maxDataSourceBytes {
			rd.Close()
			return nil, api.Invalid(key+".documentId", fmt.Sprintf("a data source is over %d MiB", maxDataSourceBytes>>20))
		}
		b, err := io.ReadAll(io.LimitReader(rd, maxDataSourceBytes+1))
		rd.Close()
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, api.Invalid(key+".documentId", fmt.Sprintf("document '%s' is not JSON", ds.DocumentID))
		}
		root := ds.DataRoot
		if root == "" {
			root = "data"
		}
		for _, part := range strings.Split(root, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = m[part]
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, api.Invalid(key+".dataRoot", fmt.Sprintf("document '%s' has no object at '%s'", ds.DocumentID, root))
		}
		flatten("", m, data)
	}
	return data, nil
}

func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		if len(out) > 10000 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			flatten(prefix+k+".", x, out)
		case string:
			out[prefix+k] = x
		case nil:
			out[prefix+k] = ""
		case float64:
			out[prefix+k] = storage.FormatNumber(x)
		case bool:
			out[prefix+k] = strconv.FormatBool(x)
		default:
			b, _ := json.Marshal(x)
			out[prefix+k] = string(b)
		}
	}
}
