package search

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

// shareJSON is FormKiQ's UserShare, with Quire's username and
// insertedDate.
func shareJSON(sh *storage.Share) map[string]any {
	m := map[string]any{
		"shareKey": sh.ShareKey, "siteId": sh.SiteID, "type": sh.Type, "path": sh.Path,
		"permissions": sh.Permissions, "permissionType": sh.PermissionType, "userId": sh.UserID,
		"insertedDate": api.FormatDate(sh.InsertedDate),
	}
	if sh.Group != "" {
		m["group"] = sh.Group
	}
	if sh.Username != "" {
		m["username"] = sh.Username
	}
	return m
}

// HandleGetShares serves GET /shares: the shares made to the caller
// (their groups, or them), of every site; `group` narrows to one group.
// Admins see every share.
func (s *Handlers) HandleGetShares(r *api.Request) error {
	group := strings.Clone(r.Query("group"))
	if group != "" && !api.ValidUserID(group) {
		return api.Invalid("group", "invalid 'group'")
	}
	keep := func(sh *storage.Share) bool {
		if group != "" && sh.Group != group {
			return false
		}
		return api.ShareListed(r, sh)
	}
	return api.KeyPage(r, "share", "shares", func(after string, limit int) ([]storage.Share, string, error) {
		return s.DB.Shares(keep, after, limit)
	}, shareJSON)
}

// HandleAddFolderShare serves POST /shares/folders/{indexKey} (GOVERN)
// {share:{group | username, permissions}}: 201 {message, shareKey}.
func (s *Handlers) HandleAddFolderShare(r *api.Request) error {
	var in struct {
		Share *struct {
			Group       string   `json:"group"`
			Username    string   `json:"username"`
			Permissions []string `json:"permissions"`
		} `json:"share"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.Share == nil {
		return api.Invalid("share", "'share' is required")
	}
	path, err := s.folderOfIndexKey(r, api.PathParam(r, "indexKey"))
	if err != nil {
		return err
	}
	key := uuid.NewString()
	sh := storage.Share{ShareKey: key, Path: path, Group: strings.TrimSpace(in.Share.Group),
		Username: strings.TrimSpace(in.Share.Username), Permissions: in.Share.Permissions}
	if _, err := s.Apply(r, storage.OpAddShare, storage.AddShare{Share: sh}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"message": "Folder share created", "shareKey": key})
}

// HandleDeleteShare serves DELETE /shares/{shareKey}: an admin, or a
// governor of the share's site.
func (s *Handlers) HandleDeleteShare(r *api.Request) error {
	key := api.PathParam(r, "shareKey")
	sh, err := s.DB.GetShare(key)
	if err != nil {
		return err
	}
	if !r.Principal.Admin && !r.Principal.Can(sh.SiteID, auth.PermGovern) {
		// Neither a recipient nor anyone else learns more than a
		// governor would: the share exists, it is not theirs to delete.
		return api.ErrStatus(http.StatusUnauthorized, fmt.Sprintf("fkq access denied (GOVERN on site '%s' required)", sh.SiteID))
	}
	r.Site = sh.SiteID
	if _, err := s.Apply(r, storage.OpDeleteShare, storage.DeleteShare{ShareKey: key}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Share '%s' deleted", key)})
}
