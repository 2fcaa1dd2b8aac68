package certify

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// SignatureInfo is what Verify found of one signature.
type SignatureInfo struct {
	Signer    string    // the signing certificate's subject common name
	SignedAt  time.Time // the signingTime attribute
	Certified bool      // a DocMDP certification signature
	// WholeFile: the byte range ends at the end of the file, so nothing
	// was added after this signature.
	WholeFile bool
	// Timestamped: the signature carries an RFC 3161 timestamp token;
	// Timestamp is its time when the token verifies (else Err says why).
	Timestamped bool
	Timestamp   time.Time
	Err         error // nil when the signature is valid
}

var reByteRange = regexp.MustCompile(`/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]`)

// Verify checks every signature of pdf on its own, without the signing
// library: the byte range, the message digest of the signed bytes, and
// the signature over the signed attributes with the certificate's key.
// It does not judge trust in the certificate.
func Verify(pdf []byte) ([]SignatureInfo, error) {
	var out []SignatureInfo
	for _, m := range reByteRange.FindAllSubmatchIndex(pdf, -1) {
		var n [4]int
		for i := range n {
			n[i], _ = strconv.Atoi(string(pdf[m[2+2*i]:m[3+2*i]]))
		}
		info := SignatureInfo{WholeFile: n[2]+n[3] == len(pdf)}
		// The signature dictionary around the byte range tells a
		// certification from an approval.
		dict := pdf[m[0]:]
		if e := bytes.Index(dict, []byte("endobj")); e >= 0 {
			dict = dict[:e]
		}
		info.Certified = bytes.Contains(dict, []byte("/TransformMethod /DocMDP"))
		if n[0] != 0 || n[1] <= 0 || n[2] <= n[1]+2 || n[2]+n[3] > len(pdf) {
			info.Err = errors.New("bad byte range")
			out = append(out, info)
			continue
		}
		hexSig := pdf[n[1]+1 : n[2]-1]
		der, err := hex.DecodeString(string(hexSig))
		if err != nil {
			info.Err = fmt.Errorf("contents: %w", err)
			out = append(out, info)
			continue
		}
		signed := append(append([]byte{}, pdf[:n[1]]...), pdf[n[2]:n[2]+n[3]]...)
		info.Err = verifyCMS(der, signed, &info)
		out = append(out, info)
	}
	if len(out) == 0 {
		return nil, errors.New("no signature")
	}
	return out, nil
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"explicit,tag:0"`
}

type signedData struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	EncapContentInfo asn1.RawValue
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

type signerInfo struct {
	Version            int
	SID                asn1.RawValue
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue `asn1:"set"`
}

var (
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningTime   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSHA256        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
)

// verifyCMS checks a PDF signature's CMS SignedData over the signed
// bytes and any timestamp token it carries, filling info.
func verifyCMS(der, signed []byte, info *SignatureInfo) error {
	var ci contentInfo
	if _, err := asn1.Unmarshal(der, &ci); err != nil || !ci.ContentType.Equal(oidSignedData) {
		return errors.New("not a CMS SignedData")
	}
	var sd signedData
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return fmt.Errorf("signed data: %w", err)
	}
	signer, at, err := verifySignedData(sd, signed)
	info.SignedAt = at
	if err != nil {
		return err
	}
	info.Signer = signer.Subject.CommonName
	info.Timestamp, info.Timestamped, err = signatureTimestamp(sd.SignerInfos[0])
	return err
}

// verifySignedData checks the only signer of sd over content: the
// message digest attribute is SHA-256 of content and the signature over
// the signed attributes verifies with one of sd's certificates, which it
// returns with the signing time.
func verifySignedData(sd signedData, content []byte) (*x509.Certificate, time.Time, error) {
	if len(sd.SignerInfos) != 1 {
		return nil, time.Time{}, fmt.Errorf("%d signer infos, want 1", len(sd.SignerInfos))
	}
	certs, err := x509.ParseCertificates(sd.Certificates.Bytes)
	if err != nil || len(certs) == 0 {
		return nil, time.Time{}, errors.New("no certificates")
	}
	si := sd.SignerInfos[0]
	if !si.DigestAlgorithm.Algorithm.Equal(oidSHA256) {
		return nil, time.Time{}, errors.New("digest is not SHA-256")
	}
	var attrs []attribute
	rest := si.SignedAttrs.Bytes
	for len(rest) > 0 {
		var a attribute
		if rest, err = asn1.Unmarshal(rest, &a); err != nil {
			return nil, time.Time{}, fmt.Errorf("signed attributes: %w", err)
		}
		attrs = append(attrs, a)
	}
	var md []byte
	var at time.Time
	for _, a := range attrs {
		switch {
		case a.Type.Equal(oidMessageDigest):
			if _, err := asn1.Unmarshal(a.Values.Bytes, &md); err != nil {
				return nil, time.Time{}, errors.New("bad message digest")
			}
		case a.Type.Equal(oidSigningTime):
			if _, err := asn1.Unmarshal(a.Values.Bytes, &at); err != nil {
				return nil, time.Time{}, errors.New("bad signing time")
			}
		}
	}
	if !bytes.Equal(md, digest(content)) {
		return nil, at, errors.New("the document was changed after signing (digest mismatch)")
	}
	// The signature covers the DER of the attributes as a SET.
	set := append([]byte{0x31}, si.SignedAttrs.FullBytes[1:]...)
	for _, c := range certs {
		var alg x509.SignatureAlgorithm
		switch c.PublicKey.(type) {
		case *rsa.PublicKey:
			alg = x509.SHA256WithRSA
		case *ecdsa.PublicKey:
			alg = x509.ECDSAWithSHA256
		case ed25519.PublicKey:
			alg = x509.PureEd25519
		default:
			continue
		}
		if c.CheckSignature(alg, set, si.Signature) == nil {
			return c, at, nil
		}
	}
	return nil, at, errors.New("no certificate verifies the signature")
}
