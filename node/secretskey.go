package node

import (
	"errors"
	"fmt"

	"quire/auth"
	"quire/storage"
)

// useSecretsKey installs the secrets key the store's last rotation names
// (POST /system/secrets/rotate, storage.OpRotateSecretsKey) when the data
// dir holds another: a cluster member unwraps it from the command with
// the key it derives from the cluster CA; a single server takes the key
// it staged before proposing. It runs when the rotation is applied here
// (a commit hook), after a snapshot replaced the store, and at start (a
// crash between the apply and the file is repaired then).
func (n *Node) useSecretsKey() error {
	st, err := n.DB.GetSecretsKeyState()
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur, err := auth.CurrentSecretsKeyID(n.cfg.DataDir); err == nil && cur == st.KeyID {
		return nil
	}
	var k []byte
	if len(st.Wrapped) > 0 {
		wk, err := n.secretsWrapKey()
		if err != nil {
			return err
		}
		if k, err = auth.UnwrapKey(wk, st.Wrapped); err != nil {
			return fmt.Errorf("unwrap the rotated secrets key: %w", err)
		}
	} else if k, err = auth.StagedSecretsKey(n.cfg.DataDir); err != nil {
		return fmt.Errorf("the rotated secrets key %s is not staged in this data dir: %w", st.KeyID, err)
	}
	if auth.SecretsKeyID(k) != st.KeyID {
		return fmt.Errorf("the secrets key at hand is not the rotated one (%s)", st.KeyID)
	}
	return auth.InstallSecretsKey(n.cfg.DataDir, k)
}

// secretsWrapKey is the cluster's key for wrapping a rotated secrets
// key (nil, nil on a single server: it stages the key instead).
func (n *Node) secretsWrapKey() ([]byte, error) {
	if !n.cfg.Cluster.Enabled() {
		return nil, nil
	}
	ca, err := n.clusterCA()
	if err != nil {
		return nil, err
	}
	return ca.SecretsWrapKey()
}

// watchSecretsKey installs a rotated secrets key as its command is applied.
func (n *Node) watchSecretsKey() {
	n.DB.OnCommit(func(c *storage.Command, _ storage.Result) {
		if c.Op != storage.OpRotateSecretsKey {
			return
		}
		if err := n.useSecretsKey(); err != nil {
			n.cfg.Logger.Error("rotated secrets key not installed", "err", err)
		}
	})
}
