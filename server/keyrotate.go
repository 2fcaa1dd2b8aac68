package server

import (
	"net/http"
	"time"

	"quire/auth"
	"quire/storage"
)

// defaultKeyGrace is how long the keys before a rotation keep verifying
// when the request does not say.
const defaultKeyGrace = 24 * time.Hour

// handleRotateKeys serves POST /system/keys/rotate (Admins),
// {graceSeconds?}: new token and URL signing keys, made here and applied
// as one command by every node of a cluster (the single server applies it
// alike). The previous keys verify tokens and signed URLs for the grace
// (default 24 h, at most 30 days); only the new keys sign.
func (s *Server) handleRotateKeys(r *reqCtx) error {
	if s.deps.DataDir == "" {
		return errStatus(http.StatusNotFound, "key rotation is not available on this server")
	}
	var in struct {
		GraceSeconds *int64 `json:"graceSeconds"`
	}
	if err := r.readBody(&in, 4<<10); err != nil {
		return err
	}
	grace := int64(defaultKeyGrace / time.Second)
	if in.GraceSeconds != nil {
		grace = *in.GraceSeconds
	}
	if grace < 0 || grace > int64(storage.MaxKeyGrace/time.Second) {
		return invalid("graceSeconds", "invalid 'graceSeconds': between 0 and 2592000")
	}
	next, err := auth.NewKeys()
	if err != nil {
		return err
	}
	cur, err := auth.ExportKeys(s.deps.DataDir)
	if err != nil {
		return err
	}
	if _, err := s.apply(r, storage.OpRotateKeys, storage.RotateKeys{
		Keys:         storage.SigningKeys{SigningKey: next.SigningKey, URLKey: next.URLKey},
		Previous:     storage.SigningKeys{SigningKey: cur.SigningKey, URLKey: cur.URLKey},
		GraceSeconds: grace,
	}); err != nil {
		return err
	}
	ring, err := s.db.KeyRing()
	if err != nil {
		return err
	}
	kid, err := auth.KeyID(auth.Keys{SigningKey: ring.Current.SigningKey, URLKey: ring.Current.URLKey})
	if err != nil {
		return err
	}
	s.log.Info("signing keys rotated", "kid", kid, "previousValidUntil", ring.PreviousUntil, "by", r.user())
	return r.JSON(map[string]any{
		"tokenKeyId":         kid,
		"rotatedAt":          ring.RotatedAt.UTC().Format(time.RFC3339),
		"previousValidUntil": ring.PreviousUntil.UTC().Format(time.RFC3339),
	})
}
