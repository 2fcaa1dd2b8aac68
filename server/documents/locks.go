package documents

import (
	"fmt"

	"quire/server/internal/api"
	"quire/storage"
)

// Checkout and legal hold (API.md "Checkout and legal hold";
// storage/locks.go). The lock shows as the reserved attributes Checkout or
// CheckoutForLegalHold, LockedBy and LockedDate.

// HandleSetLock serves PUT /documents/{id}/checkout and .../legalHold,
// and their DELETE (check in, lift the hold). An administrator may check
// in another user's checkout; only the site's governors set or lift a
// legal hold (the route's permission).
func (s *Handlers) HandleSetLock(kind string, release bool) api.Handler {
	return func(r *api.Request) error {
		ref := storage.SetDocumentLock{DocumentID: r.PathDocID(), ArtifactID: r.ArtifactID, Kind: kind, Release: release, Force: r.Principal.Admin}
		if _, err := s.Apply(r, storage.OpSetDocumentLock, ref); err != nil {
			return err
		}
		id := ref.DocumentID
		if ref.ArtifactID != "" {
			id = ref.ArtifactID
		}
		var msg string
		switch {
		case kind == storage.LockCheckout && !release:
			msg = "Document '%s' checked out"
		case kind == storage.LockCheckout:
			msg = "Document '%s' checked in"
		case !release:
			msg = "Legal hold set on document '%s'"
		default:
			msg = "Legal hold removed from document '%s'"
		}
		return r.JSON(api.MessageBody{Message: fmt.Sprintf(msg, id)})
	}
}
