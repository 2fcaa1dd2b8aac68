package node

import (
	"crypto/x509"
	"fmt"
	"os"

	"quire/certify"
)

// TSAConfig names the time-stamping authority of PDF signatures
// (certify.tsa_url, certify.tsa_ca_file).
type TSAConfig struct {
	URL    string
	CAFile string
}

// open is the authority, nil without a URL; a CA file that cannot be
// read or holds no certificate refuses the start.
func (c TSAConfig) open() (*certify.TSA, error) {
	if c.URL == "" {
		return nil, nil
	}
	t := &certify.TSA{URL: c.URL}
	if c.CAFile != "" {
		b, err := os.ReadFile(c.CAFile)
		if err != nil {
			return nil, fmt.Errorf("certify.tsa_ca_file: %w", err)
		}
		t.Roots = x509.NewCertPool()
		if !t.Roots.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("certify.tsa_ca_file: no PEM certificate in %s", c.CAFile)
		}
	}
	return t, nil
}
