package servertest

import (
	"testing"
	"time"

	"quire/quiretest"
)

// Pkcs12File makes a CA-issued certificate for name as a PKCS #12 file.
func Pkcs12File(t *testing.T, name, password string) []byte {
	return quiretest.NewCertificate(t, name, time.Now().AddDate(1, 0, 0)).PKCS12(t, password)
}
