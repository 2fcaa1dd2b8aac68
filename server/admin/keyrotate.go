package admin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"quire/auth"
	"quire/server/internal/api"
	"quire/server/signatures"
	"quire/storage"
)

// defaultKeyGrace is how long the keys before a rotation keep verifying
// when the request does not say.
const defaultKeyGrace = 24 * time.Hour

// HandleRotateKeys serves POST /system/keys/rotate (Admins),
// {graceSeconds?}: new token and URL signing keys, made here and applied
// as one command by every node of a cluster (the single server applies it
// alike). The previous keys verify tokens and signed URLs for the grace
// (default 24 h, at most 30 days); only the new keys sign.
func (s *Handlers) HandleRotateKeys(r *api.Request) error {
	if s.Deps.DataDir == "" {
		return api.ErrStatus(http.StatusNotFound, "key rotation is not available on this server")
	}
	var in struct {
		GraceSeconds *int64 `json:"graceSeconds"`
	}
	if err := r.ReadBody(&in, 4<<10); err != nil {
		return err
	}
	grace := int64(defaultKeyGrace / time.Second)
	if in.GraceSeconds != nil {
		grace = *in.GraceSeconds
	}
	if grace < 0 || grace > int64(storage.MaxKeyGrace/time.Second) {
		return api.Invalid("graceSeconds", "invalid 'graceSeconds': between 0 and 2592000")
	}
	next, err := auth.NewKeys()
	if err != nil {
		return err
	}
	cur, err := auth.ExportKeys(s.Deps.DataDir)
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpRotateKeys, storage.RotateKeys{
		Keys:         storage.SigningKeys{SigningKey: next.SigningKey, URLKey: next.URLKey},
		Previous:     storage.SigningKeys{SigningKey: cur.SigningKey, URLKey: cur.URLKey},
		GraceSeconds: grace,
	}); err != nil {
		return err
	}
	ring, err := s.DB.KeyRing()
	if err != nil {
		return err
	}
	kid, err := auth.KeyID(auth.Keys{SigningKey: ring.Current.SigningKey, URLKey: ring.Current.URLKey})
	if err != nil {
		return err
	}
	s.Log.Info("signing keys rotated", "kid", kid, "previousValidUntil", ring.PreviousUntil, "by", r.User())
	return r.JSON(map[string]any{
		"tokenKeyId":         kid,
		"rotatedAt":          ring.RotatedAt.UTC().Format(time.RFC3339),
		"previousValidUntil": ring.PreviousUntil.UTC().Format(time.RFC3339),
	})
}

// HandleRotateSecretsKey serves POST /system/secrets/rotate (Admins): a
// new secrets key, every site's secrets opened with the current one and
// sealed again with it, applied as one command
// (storage.OpRotateSecretsKey). In a cluster the command carries the key
// wrapped with the key the members derive from the cluster CA; a single
// server stages it in its data dir. Each node installs it as the command
// is applied. 409 when a secret changed meanwhile.
func (s *Handlers) HandleRotateSecretsKey(r *api.Request) error {
	if s.Deps.DataDir == "" {
		return api.ErrStatus(http.StatusNotFound, "secrets key rotation is not available on this server")
	}
	if err := r.ReadBody(&struct{}{}, 4<<10); err != nil {
		return err
	}
	next, err := auth.NewSecretsKey()
	if err != nil {
		return err
	}
	// A follower reads its own store, which may not hold a secret just
	// added through another node: the applier then refuses the set (409).
	// The refused command was applied here too before apply returns, so
	// this node has caught up with it, and the next try reads the set the
	// leader holds.
	var p storage.RotateSecretsKey
	for attempt := 1; ; attempt++ {
		p, err = s.resealAll(next)
		if err == nil {
			_, err = s.Apply(r, storage.OpRotateSecretsKey, p)
		}
		var ce *storage.ConflictError
		if err == nil || !errors.As(err, &ce) || attempt == 3 {
			break
		}
	}
	if err != nil {
		return err
	}
	s.Log.Info("secrets key rotated", "keyId", p.KeyID, "secrets", len(p.Secrets), "by", r.User())
	return r.JSON(map[string]any{"keyId": p.KeyID, "secrets": len(p.Secrets)})
}

// resealAll is the rotation command to next: every site's secrets sealed
// again with it, and next wrapped for a cluster's members or staged in
// this data dir.
func (s *Handlers) resealAll(next []byte) (storage.RotateSecretsKey, error) {
	p := storage.RotateSecretsKey{KeyID: auth.SecretsKeyID(next), Secrets: []storage.ResealedSecret{}}
	all, err := s.DB.SealedSecrets()
	if errors.Is(err, storage.ErrTooManySecrets) {
		return p, api.ErrStatus(http.StatusBadRequest, err.Error())
	}
	if err != nil {
		return p, err
	}
	for _, ss := range all {
		sealed, err := auth.ResealSecret(s.Deps.DataDir, next, ss.Secret.Sealed, signatures.SecretAAD(ss.Site, ss.Secret.Alias))
		if errors.Is(err, auth.ErrSecretsKeyPending) {
			return p, api.ErrStatus(http.StatusServiceUnavailable, "this node has not installed the current secrets key yet; try again")
		}
		if err != nil {
			return p, fmt.Errorf("open secret %s of site %s: %w", ss.Secret.Alias, ss.Site, err)
		}
		h := sha256.Sum256(ss.Secret.Sealed)
		p.Secrets = append(p.Secrets, storage.ResealedSecret{Site: ss.Site, Alias: ss.Secret.Alias, Was: hex.EncodeToString(h[:]), Sealed: sealed})
	}
	var wk []byte
	if s.Deps.SecretsWrapKey != nil {
		if wk, err = s.Deps.SecretsWrapKey(); err != nil {
			return p, err
		}
	}
	if wk != nil {
		p.Wrapped, err = auth.WrapKey(wk, next)
		return p, err
	}
	return p, auth.StageSecretsKey(s.Deps.DataDir, next)
}
