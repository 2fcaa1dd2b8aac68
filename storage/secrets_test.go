package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// sealedWith fakes auth.SealSecret's layout for key id: "QS1", the 8
// bytes of the ID, then whatever follows.
func sealedWith(id, rest string) []byte {
	b, _ := hex.DecodeString(id)
	return append(append([]byte("QS1"), b...), rest...)
}

func wasOf(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// TestRotateSecretsKey: a rotation replaces every secret's sealed bytes
// only when it names exactly the secrets stored, as they were (else a
// 409 and nothing written); afterwards a secret sealed with another key
// is refused; a bad key ID is a validation error.
func TestRotateSecretsKey(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	const k1, k2 = "1111111111111111", "2222222222222222"
	put := func(site, alias string, sealed []byte) error {
		_, err := d.Apply(t.Context(), MustCommand(OpPutSecret, site, "admin", t0, PutSecret{Secret: Secret{Alias: alias, Type: "CERTIFICATE", Sealed: sealed}}))
		return err
	}
	rotate := func(p RotateSecretsKey) error {
		_, err := d.Apply(t.Context(), MustCommand(OpRotateSecretsKey, "", "admin", t0, p))
		return err
	}
	a, b := []byte("legacy-a"), []byte("legacy-b")
	if err := put("default", "a", a); err != nil {
		t.Fatal(err)
	}
	if err := put("fin/ance", "b", b); err != nil {
		t.Fatal(err)
	}
	full := []ResealedSecret{
		{Site: "default", Alias: "a", Was: wasOf(a), Sealed: sealedWith(k2, "new-a")},
		{Site: "fin/ance", Alias: "b", Was: wasOf(b), Sealed: sealedWith(k2, "new-b")},
	}
	var ce *ConflictError
	var ve *ValidationError
	for _, tc := range []struct {
		name  string
		p     RotateSecretsKey
		check func(error) bool
	}{
		{"a secret missing", RotateSecretsKey{KeyID: k2, Secrets: full[:1]}, func(err error) bool { return errors.As(err, &ce) }},
		{"a secret changed meanwhile", RotateSecretsKey{KeyID: k2, Secrets: []ResealedSecret{full[0], {Site: "fin/ance", Alias: "b", Was: wasOf([]byte("other")), Sealed: full[1].Sealed}}}, func(err error) bool { return errors.As(err, &ce) }},
		{"a secret not stored", RotateSecretsKey{KeyID: k2, Secrets: append(append([]ResealedSecret{}, full...), ResealedSecret{Site: "default", Alias: "c", Was: wasOf(nil), Sealed: sealedWith(k2, "c")})}, func(err error) bool { return errors.As(err, &ce) }},
		{"sealed with another key", RotateSecretsKey{KeyID: k1, Secrets: full}, func(err error) bool { return errors.As(err, &ve) }},
		{"bad key id", RotateSecretsKey{KeyID: "xyz", Secrets: full}, func(err error) bool { return errors.As(err, &ve) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := rotate(tc.p); !tc.check(err) {
				t.Fatalf("rotate: %v", err)
			}
			if s, err := d.GetSecret("default", "a"); err != nil || string(s.Sealed) != "legacy-a" {
				t.Fatalf("a refused rotation wrote: %v %q", err, s.Sealed)
			}
		})
	}
	if err := rotate(RotateSecretsKey{KeyID: k2, Secrets: full, Wrapped: []byte("w")}); err != nil {
		t.Fatal(err)
	}
	for _, r := range full {
		if s, err := d.GetSecret(r.Site, r.Alias); err != nil || string(s.Sealed) != string(r.Sealed) {
			t.Errorf("%s/%s after the rotation: %v %q", r.Site, r.Alias, err, s.Sealed)
		}
	}
	if st, err := d.GetSecretsKeyState(); err != nil || st.KeyID != k2 || string(st.Wrapped) != "w" {
		t.Errorf("key state %+v %v", st, err)
	}
	if err := put("default", "stale", sealedWith(k1, "x")); !errors.As(err, &ce) || !strings.Contains(err.Error(), "rotated") {
		t.Errorf("a secret sealed with the old key: %v, want a 409", err)
	}
	if err := put("default", "fresh", sealedWith(k2, "x")); err != nil {
		t.Errorf("a secret sealed with the new key: %v", err)
	}
	got, err := d.SealedSecrets()
	if err != nil || len(got) != 3 {
		t.Fatalf("SealedSecrets: %d %v", len(got), err)
	}
	if got[0].Site == "" || got[len(got)-1].Secret.Sealed == nil {
		t.Errorf("SealedSecrets: %+v", got)
	}
}
