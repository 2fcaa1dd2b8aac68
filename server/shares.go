package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"quire/auth"
	"quire/storage"
)

// Folder shares (FormKiQ's GET /shares, POST /shares/folders/{indexKey},
// DELETE /shares/{shareKey}; API.md "Folder shares"). A share gives a
// group (or one user) READ, WRITE and DELETE inside a folder of a site:
//
//   - with shareKey on a route of shareRoutes, the request acts through
//     the share: on its site (a recipient needs no role there), with the
//     share's permissions, inside its folder only;
//   - without shareKey, a caller of the site whose groups a share names
//     gets its permissions in the folder where folder permissions would
//     refuse them (within what the caller's site role allows).

// shareRoutes are the routes that take shareKey (FormKiQ's shareKeyParam),
// by method and registered path. Every other route refuses it with 400.
var shareRoutes = map[string]bool{
	"POST /documents":                                               true,
	"GET /documents/:documentId":                                    true,
	"PATCH /documents/:documentId":                                  true,
	"GET /documents/:documentId/actions":                            true,
	"GET /documents/:documentId/content":                            true,
	"GET /documents/:documentId/fulltext":                           true,
	"DELETE /documents/:documentId/fulltext/tags/:tagKey":           true,
	"DELETE /documents/:documentId/fulltext/tags/:tagKey/:tagValue": true,
	"PUT /documents/:documentId/antivirus":                          true,
	"GET /documents/:documentId/ocr":                                true,
	"GET /documents/:documentId/syncs":                              true,
	"GET /documents/:documentId/tags":                               true,
	"GET /documents/:documentId/tags/:tagKey":                       true,
	"DELETE /documents/:documentId/tags/:tagKey/:tagValue":          true,
	"GET /documents/upload":                                         true,
	"POST /documents/upload":                                        true,
	"GET /documents/:documentId/upload":                             true,
	"GET /documents/:documentId/url":                                true,
	"GET /documents/:documentId/versions":                           true,
	"DELETE /documents/:documentId/versions/:versionKey":            true,
	"GET /folders":              true,
	"POST /folders":             true,
	"DELETE /folders/:indexKey": true,
}

// sharePerm is the share permission a route's site permission needs.
var sharePerm = map[auth.Permission]string{read: storage.FolderRead, write: storage.FolderWrite, del: storage.FolderDelete}

// errShareDenied refuses a shareKey the caller may not use.
func errShareDenied(key string) error {
	return errStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (share '%s')", key))
}

// useShare makes a request with shareKey act through the share: the
// route must take shareKey, the caller must be the share's group member
// (or user), a siteId given must be the share's, and the route's
// permission must be one the share gives. It replaces the site role
// check of wrap.
func (s *Server) useShare(r *reqCtx, key string, perm auth.Permission) error {
	if !shareRoutes[queryRouteKey(r.Ctx)] {
		return invalid("shareKey", "'shareKey' is not supported on this route")
	}
	sh, err := s.db.GetShare(key)
	if isNotFound(err) {
		return errShareDenied(key)
	}
	if err != nil {
		return err
	}
	// A credential bound to a site (an API key, a delegation) never
	// acts on another site's share, whatever its groups or username.
	if b := r.p.BoundSite(); !sh.SharedWith(r.p.Username, r.p.Groups) || b != "" && b != sh.SiteID {
		return errShareDenied(key)
	}
	if site := r.Query("siteId"); site != "" && site != sh.SiteID {
		return invalid("siteId", "'siteId' is not the share's site")
	}
	need, ok := sharePerm[perm]
	if !ok || !slices.Contains(sh.Permissions, need) {
		return errStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (share '%s' does not give %s)", key, strings.ToUpper(string(perm))))
	}
	r.site, r.share = sh.SiteID, sh
	return nil
}

// shareAllows reports whether a share of the site names the caller and
// gives perm in dir (without shareKey: shares add to folder permissions).
func (s *Server) shareAllows(r *reqCtx, dir, perm string) bool {
	if b := r.p.BoundSite(); b != "" && b != r.site {
		return false
	}
	if !r.shLoaded {
		r.shLoaded = true
		all, err := s.db.SiteShares(r.site)
		if err != nil {
			return false // fail closed
		}
		for i := range all {
			if all[i].SharedWith(r.p.Username, r.p.Groups) {
				r.shares = append(r.shares, all[i])
			}
		}
	}
	for i := range r.shares {
		if r.shares[i].Grants(dir, perm) {
			return true
		}
	}
	return false
}

// shareJSON is FormKiQ's UserShare, with Quire's username and
// insertedDate.
func shareJSON(sh *storage.Share) map[string]any {
	m := map[string]any{
		"shareKey": sh.ShareKey, "siteId": sh.SiteID, "type": sh.Type, "path": sh.Path,
		"permissions": sh.Permissions, "permissionType": sh.PermissionType, "userId": sh.UserID,
		"insertedDate": formatDate(sh.InsertedDate),
	}
	if sh.Group != "" {
		m["group"] = sh.Group
	}
	if sh.Username != "" {
		m["username"] = sh.Username
	}
	return m
}

// handleGetShares serves GET /shares: the shares made to the caller
// (their groups, or them), of every site; `group` narrows to one group.
// Admins see every share.
func (s *Server) handleGetShares(r *reqCtx) error {
	group := strings.Clone(r.Query("group"))
	if group != "" && !validUserID(group) {
		return invalid("group", "invalid 'group'")
	}
	keep := func(sh *storage.Share) bool {
		if group != "" && sh.Group != group {
			return false
		}
		if b := r.p.BoundSite(); b != "" && sh.SiteID != b {
			return false
		}
		return r.p.Admin || sh.SharedWith(r.p.Username, r.p.Groups)
	}
	return keyPage(r, "share", "shares", func(after string, limit int) ([]storage.Share, string, error) {
		return s.db.Shares(keep, after, limit)
	}, shareJSON)
}

// handleAddFolderShare serves POST /shares/folders/{indexKey} (GOVERN)
// {share:{group | username, permissions}}: 201 {message, shareKey}.
func (s *Server) handleAddFolderShare(r *reqCtx) error {
	var in struct {
		Share *struct {
			Group       string   `json:"group"`
			Username    string   `json:"username"`
			Permissions []string `json:"permissions"`
		} `json:"share"`
	}
	if err := r.readBody(&in, 64<<10); err != nil {
		return err
	}
	if in.Share == nil {
		return invalid("share", "'share' is required")
	}
	path, err := s.folderOfIndexKey(r, pathParam(r, "indexKey"))
	if err != nil {
		return err
	}
	key := uuid.NewString()
	sh := storage.Share{ShareKey: key, Path: path, Group: strings.TrimSpace(in.Share.Group),
		Username: strings.TrimSpace(in.Share.Username), Permissions: in.Share.Permissions}
	if _, err := s.apply(r, storage.OpAddShare, storage.AddShare{Share: sh}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"message": "Folder share created", "shareKey": key})
}

// handleDeleteShare serves DELETE /shares/{shareKey}: an admin, or a
// governor of the share's site.
func (s *Server) handleDeleteShare(r *reqCtx) error {
	key := pathParam(r, "shareKey")
	sh, err := s.db.GetShare(key)
	if err != nil {
		return err
	}
	if !r.p.Admin && !r.p.Can(sh.SiteID, govern) {
		// Neither a recipient nor anyone else learns more than a
		// governor would: the share exists, it is not theirs to delete.
		return errStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (GOVERN on site '%s' required)", sh.SiteID))
	}
	r.site = sh.SiteID
	if _, err := s.apply(r, storage.OpDeleteShare, storage.DeleteShare{ShareKey: key}); err != nil {
		return err
	}
	return r.JSON(messageBody{fmt.Sprintf("Share '%s' deleted", key)})
}
