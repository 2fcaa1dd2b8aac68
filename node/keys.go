package node

import (
	"errors"

	"quire/auth"
	"quire/storage"
)

// useKeyRing makes the signing keys rotated through the store (POST
// /system/keys/rotate, storage.OpRotateKeys) this node's: the current keys
// go to the data dir's key files (so quire token signs with them) and,
// with the previous keys and their grace, to the Authenticator. It runs
// when the rotation is applied here (a commit hook, on every node of a
// cluster), after a snapshot replaced the store, and at start (a crash
// between the apply and the files is repaired then). A store that was
// never rotated leaves the key files as they are.
func (n *Node) useKeyRing() error {
	ring, err := n.DB.KeyRing()
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	cur := auth.Keys{SigningKey: ring.Current.SigningKey, URLKey: ring.Current.URLKey}
	if files, err := auth.ExportKeys(n.cfg.DataDir); err != nil || files != cur {
		if err := auth.InstallKeys(n.cfg.DataDir, cur); err != nil {
			return err
		}
	}
	var prev *auth.Keys
	if ring.Previous != nil {
		prev = &auth.Keys{SigningKey: ring.Previous.SigningKey, URLKey: ring.Previous.URLKey}
	}
	return n.Auth.UseKeys(cur, prev, ring.PreviousUntil)
}

// watchKeyRing installs rotated keys as their command is applied.
func (n *Node) watchKeyRing() {
	n.DB.OnCommit(func(c *storage.Command, _ storage.Result) {
		if c.Op != storage.OpRotateKeys {
			return
		}
		if err := n.useKeyRing(); err != nil {
			n.cfg.Logger.Error("rotated signing keys not installed", "err", err)
		}
	})
}
