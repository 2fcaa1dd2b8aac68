package signatures

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"

	"quire/auth"
	"quire/certify"
	"quire/server/internal/api"
	"quire/storage"
)

// Secrets and certification (API.md "Secrets and certification").

const (
	maxPKCS12Bytes   = 32 << 10
	maxCertifyBytes  = 100 << 20 // a PDF to certify
	maxCertificates  = 5         // signatures per request
	secretSourceType = "QUIRE_SECRETS"
)

// sealedCert is what a certificate secret holds once opened.
type sealedCert struct {
	Key   []byte   `json:"key"`   // PKCS #8
	Certs [][]byte `json:"certs"` // leaf first
}

func SecretAAD(site, alias string) []byte { return []byte("quire-secret\x00" + site + "\x00" + alias) }

// HandleAddSecret serves POST /sites/{siteId}/secrets {alias, type:
// PKCS12, data (base64), password}.
func (s *Handlers) HandleAddSecret(r *api.Request) error {
	var in struct {
		Alias         string   `json:"alias"`
		Type          string   `json:"type"`
		Data          string   `json:"data"`
		Password      string   `json:"password"`
		AllowedGroups []string `json:"allowedGroups"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if !storage.ValidSecretAlias(in.Alias) {
		return api.Invalid("alias", "invalid 'alias': 1 to 64 letters, digits, '_', '.' or '-'")
	}
	if in.Type != "" && in.Type != "PKCS12" {
		return api.Invalid("type", "invalid 'type', use PKCS12")
	}
	if err := storage.CheckSecretGroups(in.AllowedGroups); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(in.Data)
	if err != nil || len(raw) == 0 || len(raw) > maxPKCS12Bytes {
		return api.Invalid("data", fmt.Sprintf("'data' must be a base64 PKCS #12 file under %d KiB", maxPKCS12Bytes>>10))
	}
	key, leaf, chain, err := pkcs12.DecodeChain(raw, in.Password)
	if err != nil {
		return api.Invalid("data", "the PKCS #12 file or its password is not valid")
	}
	if _, ok := key.(crypto.Signer); !ok {
		return api.Invalid("data", "the PKCS #12 key cannot sign")
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return api.Invalid("data", "the PKCS #12 key cannot be kept")
	}
	sc := sealedCert{Key: kder, Certs: [][]byte{leaf.Raw}}
	for _, c := range chain {
		sc.Certs = append(sc.Certs, c.Raw)
	}
	plain, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	sealed, err := auth.SealSecret(s.Deps.DataDir, plain, SecretAAD(r.Site, in.Alias))
	if err != nil {
		return err
	}
	fp := sha256.Sum256(leaf.Raw)
	sec := storage.Secret{Alias: in.Alias, Type: "CERTIFICATE", Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(),
		NotAfter: leaf.NotAfter.UTC(), Fingerprint: hex.EncodeToString(fp[:]), Sealed: sealed, AllowedGroups: in.AllowedGroups}
	if _, err := s.Apply(r, storage.OpPutSecret, storage.PutSecret{Secret: sec}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(secretJSON(&sec))
}

func secretJSON(sec *storage.Secret) map[string]any {
	m := map[string]any{"alias": sec.Alias, "type": sec.Type, "subject": sec.Subject, "issuer": sec.Issuer,
		"notAfter": api.FormatDate(sec.NotAfter), "fingerprint": sec.Fingerprint, "allowedGroups": api.NonNilStrings(sec.AllowedGroups)}
	if !sec.InsertedDate.IsZero() {
		m["insertedDate"] = api.FormatDate(sec.InsertedDate)
	}
	return m
}

// HandleGetSecrets serves GET /sites/{siteId}/secrets: aliases and
// certificate facts, never the secrets.
func (s *Handlers) HandleGetSecrets(r *api.Request) error {
	return api.KeyPage(r, "secret", "secrets", func(after string, limit int) ([]storage.Secret, string, error) {
		return s.DB.Secrets(r.Site, after, limit)
	}, secretJSON)
}

func (s *Handlers) HandleDeleteSecret(r *api.Request) error {
	if _, err := s.Apply(r, storage.OpDeleteSecret, storage.SecretRef{Alias: r.Params("alias")}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Secret deleted"})
}

// certSigner opens a site's certificate secret.
func (s *Handlers) certSigner(site, alias string) (certify.Signer, error) {
	sec, err := s.DB.GetSecret(site, alias)
	if err != nil {
		return certify.Signer{}, err
	}
	plain, err := auth.OpenSecret(s.Deps.DataDir, sec.Sealed, SecretAAD(site, alias))
	if errors.Is(err, auth.ErrSecretsKeyPending) {
		return certify.Signer{}, api.ErrStatus(http.StatusServiceUnavailable, "the secrets key is being rotated on this node; try again")
	}
	if err != nil {
		return certify.Signer{}, fmt.Errorf("open secret %s: %w", alias, err)
	}
	var sc sealedCert
	if err := json.Unmarshal(plain, &sc); err != nil || len(sc.Certs) == 0 {
		return certify.Signer{}, fmt.Errorf("secret %s is not a certificate", alias)
	}
	key, err := x509.ParsePKCS8PrivateKey(sc.Key)
	if err != nil {
		return certify.Signer{}, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return certify.Signer{}, fmt.Errorf("secret %s cannot sign", alias)
	}
	var certs []*x509.Certificate
	for _, der := range sc.Certs {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return certify.Signer{}, err
		}
		certs = append(certs, c)
	}
	return certify.Signer{Key: signer, Cert: certs[0], Chain: certs[1:]}, nil
}

// certifyPDF signs the PDF in rd with signers: qpdf refuses what is not a
// PDF or is encrypted, and rewrites the rest into the form certify reads.
func (s *Handlers) certifyPDF(ctx context.Context, rd io.Reader, signers []certify.Signer, p int) ([]byte, error) {
	qpdf, err := exec.LookPath("qpdf")
	if err != nil {
		return nil, api.ErrStatus(http.StatusServiceUnavailable, "certification needs qpdf on this server")
	}
	dir, err := os.MkdirTemp("", "certify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	f, err := os.Create(in)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(rd, maxCertifyBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if n > maxCertifyBytes {
		return nil, api.Invalid("documentId", fmt.Sprintf("the PDF is over %d MiB", maxCertifyBytes>>20))
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	// --is-encrypted exits 0 for an encrypted file, 2 for an unencrypted one.
	if exec.CommandContext(cctx, qpdf, "--is-encrypted", in).Run() == nil {
		return nil, api.Invalid("documentId", "the PDF is encrypted")
	}
	b, err := exec.CommandContext(cctx, qpdf, "--object-streams=disable", in, out).CombinedOutput()
	clean := err == nil
	if err != nil {
		var ee *exec.ExitError
		// Exit 3: warnings (qpdf repaired something), the output is written.
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			s.Log.Info("qpdf refused a PDF to certify", "err", err, "out", strings.TrimSpace(string(b)))
			return nil, api.Invalid("documentId", "the document is not a PDF that can be read")
		}
	}
	opt := certify.Options{Time: s.Now(), CertifyP: p, TSA: s.Deps.TSA}
	var signed []byte
	var ce *certify.Error
	// A PDF qpdf read without a warning and certify can read as it is
	// (a classic cross-reference table) is signed as uploaded: the
	// signatures are incremental updates of the very bytes the document
	// holds. Others (object streams, repaired files) are signed as qpdf
	// rewrote them.
	if clean {
		orig, rerr := os.ReadFile(in)
		if rerr != nil {
			return nil, rerr
		}
		signed, err = certify.Sign(orig, signers, opt)
	}
	if !clean || errors.As(err, &ce) {
		norm, rerr := os.ReadFile(out)
		if rerr != nil {
			return nil, rerr
		}
		signed, err = certify.Sign(norm, signers, opt)
	}
	if errors.As(err, &ce) {
		return nil, api.Invalid("documentId", "the PDF cannot be signed: "+ce.Msg)
	}
	var te *certify.TSAError
	if errors.As(err, &te) {
		s.Log.Warn("no timestamp for a signature", "err", err)
		return nil, api.ErrStatus(http.StatusBadGateway, "the PDF was not signed: "+te.Error())
	}
	return signed, err
}

// HandleAddCertification serves POST /documents/{id}/certifications
// {target: DOWNLOAD, certificates: [{alias, sourceType}]}: the first
// certificate certifies (DocMDP, form filling and signing allowed), the
// others approve; the signed copy is a CERTIFIED artifact.
func (s *Handlers) HandleAddCertification(r *api.Request) error {
	var in struct {
		Target       string `json:"target"`
		Certificates []struct {
			Alias      string `json:"alias"`
			SourceType string `json:"sourceType"`
		} `json:"certificates"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	fail := func(k, m string) { errs = append(errs, storage.ValidationItem{Key: k, Msg: m}) }
	if in.Target != "DOWNLOAD" {
		fail("target", "invalid 'target', use DOWNLOAD")
	}
	if len(in.Certificates) == 0 || len(in.Certificates) > maxCertificates {
		fail("certificates", fmt.Sprintf("1 to %d certificates", maxCertificates))
	}
	for i, c := range in.Certificates {
		k := fmt.Sprintf("certificates[%d]", i)
		switch c.SourceType {
		case "", secretSourceType:
		case "AWS_SECRETS_MANAGER":
			fail(k+".sourceType", "AWS Secrets Manager is not reachable from this server: add the certificate with POST /sites/{siteId}/secrets and use sourceType QUIRE_SECRETS")
		default:
			fail(k+".sourceType", "invalid 'sourceType', use QUIRE_SECRETS")
		}
		if !storage.ValidSecretAlias(c.Alias) {
			fail(k+".alias", "invalid 'alias'")
		}
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	var signers []certify.Signer
	for i, c := range in.Certificates {
		sec, err := s.DB.GetSecret(r.Site, c.Alias)
		if api.IsNotFound(err) {
			return api.Invalid(fmt.Sprintf("certificates[%d].alias", i), fmt.Sprintf("certificate '%s' not found", c.Alias))
		}
		if err != nil {
			return err
		}
		if !mayUseCertificate(r, sec) {
			return &auth.Error{Status: http.StatusUnauthorized, Msg: fmt.Sprintf("fkq access denied: certificate '%s' may be used only by the site's governors and its allowedGroups", c.Alias)}
		}
		sg, err := s.certSigner(r.Site, c.Alias)
		if api.IsNotFound(err) {
			return api.Invalid(fmt.Sprintf("certificates[%d].alias", i), fmt.Sprintf("certificate '%s' not found", c.Alias))
		}
		if err != nil {
			return err
		}
		signers = append(signers, sg)
	}
	rd, d, err := s.DB.OpenContent(r.Site, r.DocID())
	if err != nil {
		return err
	}
	defer rd.Close()
	signed, err := s.certifyPDF(r.UserContext(), rd, signers, 2)
	if err != nil {
		return err
	}
	m, tail, err := storage.WriteContent(r.UserContext(), s.Deps.Applier, bytes.NewReader(signed), 0, nil)
	if err != nil {
		return err
	}
	id := r.NewID()
	name := strings.TrimSuffix(d.Path, ".pdf")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	art := storage.Document{DocumentID: id, Path: name + "-certified.pdf", ContentType: "application/pdf", ArtifactCategory: "CERTIFIED", UserID: r.User()}
	if _, err := s.Apply(r, storage.OpAddArtifact, storage.AddArtifact{DocumentID: r.PathDocID(),
		Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}, Writer: s.ActorOf(r)}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"documentId": r.PathDocID(), "artifactId": id,
		"url": s.SignDownloadURL(s.LinkBase(r.Ctx), r.Site, id, false, false, api.DefaultURLDuration)})
}

// mayUseCertificate reports whether the caller may sign with a site's
// certificate (issue 29): a signature made with it speaks for the whole
// site, so only its governors and Admins may, and the members of the
// groups its allowedGroups names (WRITE on the document is needed too:
// the route's).
func mayUseCertificate(r *api.Request, sec *storage.Secret) bool {
	if r.Principal.Admin || r.Principal.Can(r.Site, auth.PermGovern) {
		return true
	}
	for _, g := range r.Principal.Groups {
		if slices.Contains(sec.AllowedGroups, g) {
			return true
		}
	}
	return false
}

// CertifyWithSite certifies an envelope's signed copy with the site's
// certificate named `esignature` when the site has one (esign.go).
func (s *Handlers) CertifyWithSite(ctx context.Context, site string, in *os.File) (*os.File, error) {
	sg, err := s.certSigner(site, esignCertificateAlias)
	if api.IsNotFound(err) {
		return in, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	signed, err := s.certifyPDF(ctx, in, []certify.Signer{sg}, 1)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "certified-*.pdf")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // unlinked: gone when closed
	if _, err := f.Write(signed); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// esignCertificateAlias is the site certificate envelopes are certified
// with.
const esignCertificateAlias = "esignature"
