package search

import (
	"net/http"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// folderFromQuery reads the folder of GET /folders: indexKey, else path,
// else the root.
func (s *Handlers) folderFromQuery(r *api.Request) (string, error) {
	if k := r.Query("indexKey"); k != "" {
		return s.folderOfIndexKey(r, k)
	}
	return strings.Trim(r.Query("path"), "/"), nil
}

// HandleGetFolders serves GET /folders.
func (s *Handlers) HandleGetFolders(r *api.Request) error {
	folder, err := s.folderFromQuery(r)
	if err != nil {
		return err
	}
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	if folder != "" && r.Query("indexKey") == "" {
		ok, err := s.DB.FolderExists(r.Site, folder)
		if err != nil {
			return err
		}
		if !ok {
			return &storage.NotFoundError{Msg: "folder not found"}
		}
	}
	if o, sorted, err := parseFolderSort(r); err != nil {
		return err
	} else if sorted {
		out, err := s.listFolderSorted(r, folder, o, limit)
		if err != nil {
			return err
		}
		return r.JSON(out)
	}
	res, err := s.listFolder(r, folder, false, "", limit)
	if err != nil {
		return err
	}
	out := map[string]any{"documents": api.NonNil(res.docs)}
	if res.next != "" {
		out["next"] = res.next
	}
	return r.JSON(out)
}

// CheckFolderPath validates a folder path given by a client.
func CheckFolderPath(p string) (string, error) {
	p = strings.Trim(p, "/")
	switch {
	case p == "":
		return "", api.Invalid("path", "'path' is required")
	}
	if errs := storage.CheckPath("path", p); errs != nil {
		return "", api.CheckErrors(errs)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return "", api.Invalid("path", "invalid 'path'")
		}
	}
	return p, nil
}

// HandleAddFolder serves POST /folders.
func (s *Handlers) HandleAddFolder(r *api.Request) error {
	var b struct {
		Path *string `json:"path"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if strings.Trim(api.Deref(b.Path), "/") == "" {
		return api.BadRequest("missing 'path' parameters") // FormKiQ's message
	}
	p, err := CheckFolderPath(api.Deref(b.Path))
	if err != nil {
		return err
	}
	// WRITE where the folder goes, as for a document created there
	// (issue 29).
	if !s.FolderAllows(r, p, storage.FolderWrite) {
		dir, _ := api.SplitDocPath(p)
		return api.FolderDenied(dir, storage.FolderWrite)
	}
	if _, err := s.Apply(r, storage.OpAddFolder, storage.FolderRef{Path: p}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"message": "created folder", "indexKey": FolderIndexKey(p)})
}

// HandleDeleteFolder serves DELETE /folders/{indexKey} and
// DELETE /indices/folder/{indexKey}.
func (s *Handlers) HandleDeleteFolder(r *api.Request) error {
	if t := r.Params("indexType"); t != "" && t != "folder" {
		return api.Invalid("indexType", "invalid 'indexType'")
	}
	k := api.PathParam(r, "indexKey")
	p, err := ParseFolderIndexKey(k)
	if err != nil {
		return err
	}
	// DELETE in the folder's own permissions (its own or inherited), as
	// for the documents in it (issue 29).
	if !s.FolderAllows(r, p, storage.FolderDelete) {
		return api.FolderDenied(p, storage.FolderDelete)
	}
	// The applier decides whether the folder exists and is empty.
	if _, err := s.Apply(r, storage.OpDeleteFolder, storage.FolderRef{Path: p}); api.IsNotFound(err) {
		return errInvalidIndexKey(k)
	} else if err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "deleted folder"})
}

// HandleIndexSearch serves POST /indices/search: the values of an index
// (folders: every folder path of the site).
func (s *Handlers) HandleIndexSearch(r *api.Request) error {
	var b struct {
		IndexType *string `json:"indexType"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.IndexType == nil || *b.IndexType == "" {
		return api.Invalid("indexType", "'indexType' is required")
	}
	switch *b.IndexType {
	case "folder":
	case "tags":
		// FormKiQ returns the site's tag keys as values.
		return api.KeyPage(r, "tk", "values", func(after string, limit int) ([]string, string, error) {
			return s.DB.TagKeys(r.Site, after, limit)
		}, func(k *string) map[string]any { return map[string]any{"value": *k} })
	default:
		return api.Invalid("indexType", "invalid 'indexType': folder or tags")
	}
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	after := ""
	if tok := r.Query("next"); tok != "" {
		if after, err = ParseFolderIndexKey(tok); err != nil {
			return storage.ErrBadToken
		}
	}
	names, err := s.DB.FolderNames(r.Site, "", 0)
	if err != nil {
		return err
	}
	vals := []map[string]any{}
	next := ""
	for _, n := range names {
		if after != "" && n <= after {
			continue
		}
		if len(vals) == limit {
			next = FolderIndexKey(vals[len(vals)-1]["value"].(string))
			break
		}
		vals = append(vals, map[string]any{"value": n})
	}
	out := map[string]any{"values": vals}
	if next != "" {
		out["next"] = next
	}
	return r.JSON(out)
}
