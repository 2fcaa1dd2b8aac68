// Package certify signs PDFs (SERVICE-SPEC.md §4.5; API.md
// "Certification"): each signature is an incremental update that adds a
// signature field, a signature dictionary whose /ByteRange covers the
// whole file but the /Contents hole, and a CMS (PKCS #7) detached
// SignedData over those bytes (SHA-256, signing time, the signer's
// chain). The first signer may certify the document (DocMDP); the others
// add approval signatures, each its own update.
//
// Sign reads PDFs with a classic cross-reference table and uncompressed
// objects and returns an Error for others; callers sign such a PDF as
// qpdf rewrote it (--object-streams=disable), which also rejects broken
// files.
package certify

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.mozilla.org/pkcs7"
)

// Signer is one signature's key and certificates.
type Signer struct {
	Key   crypto.Signer
	Cert  *x509.Certificate
	Chain []*x509.Certificate // intermediates and root, leaf excluded
	Name  string              // shown as the signer's name
}

// Options apply to every signature of a Sign call.
type Options struct {
	Time     time.Time
	Reason   string
	Location string
	// Certify makes the first signature a certification (DocMDP) with
	// permission level P (1: no changes, 2: form filling and signing,
	// 3: also annotations). 0 makes every signature an approval.
	CertifyP int
	// TSA, when set, timestamps every signature (RFC 3161).
	TSA *TSA
}

// Error is an input Sign cannot sign: not a PDF of the expected form.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// contentsSize is the hex length reserved for each CMS signature;
// a timestamp token (with the authority's certificates) doubles it.
const contentsSize = 16384

// Sign signs pdf with each signer in turn and returns the signed bytes.
func Sign(pdf []byte, signers []Signer, opt Options) ([]byte, error) {
	if len(signers) == 0 {
		return nil, errors.New("certify: no signer")
	}
	if opt.Time.IsZero() {
		opt.Time = time.Now()
	}
	out := pdf
	for i, s := range signers {
		p := 0
		if i == 0 {
			p = opt.CertifyP
		}
		var err error
		if out, err = signOnce(out, s, opt, p, i+1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var (
	reStartXref = regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`)
	reRef       = regexp.MustCompile(`^\s*(\d+)\s+(\d+)\s+R`)
)

// doc is what an incremental update needs of a PDF.
type doc struct {
	b       []byte
	xref    int         // offset of the last xref section
	trailer string      // the last trailer's dictionary text
	offsets map[int]int // object number -> offset (every section, newest wins)
	size    int         // /Size
	root    int         // catalog object number
	id      string      // /ID array text, if any
}

func parse(b []byte) (*doc, error) {
	m := reStartXref.FindSubmatch(bytes.TrimRight(b, "\r\n\x00 "))
	if m == nil {
		return nil, &Error{Msg: "not a PDF (no startxref)"}
	}
	d := &doc{b: b, offsets: map[int]int{}}
	d.xref, _ = strconv.Atoi(string(m[1]))
	if err := d.readXref(d.xref, 0); err != nil {
		return nil, err
	}
	return d, nil
}

// readXref reads the classic xref section at off and the trailers it
// chains to (/Prev), newer entries winning.
func (d *doc) readXref(off, depth int) error {
	if depth > 64 || off <= 0 || off >= len(d.b) || !bytes.HasPrefix(d.b[off:], []byte("xref")) {
		return &Error{Msg: "not a PDF with a cross-reference table"}
	}
	rest := d.b[off+4:]
	ti := bytes.Index(rest, []byte("trailer"))
	if ti < 0 {
		return &Error{Msg: "no trailer"}
	}
	lines := strings.Fields(string(rest[:ti]))
	for i := 0; i+1 < len(lines); {
		start, err1 := strconv.Atoi(lines[i])
		n, err2 := strconv.Atoi(lines[i+1])
		if err1 != nil || err2 != nil || n < 0 || n > 10_000_000 || i+2+3*n > len(lines) {
			return &Error{Msg: "broken cross-reference table"}
		}
		for k := 0; k < n; k++ {
			e := lines[i+2+3*k : i+5+3*k]
			o, _ := strconv.Atoi(e[0])
			if _, seen := d.offsets[start+k]; !seen && e[2] == "n" {
				d.offsets[start+k] = o
			}
		}
		i += 2 + 3*n
	}
	tr := rest[ti+7:]
	end := bytes.Index(tr, []byte("startxref"))
	if end < 0 {
		return &Error{Msg: "no trailer"}
	}
	t := string(tr[:end])
	if depth == 0 {
		d.trailer = t
		size, ok := dictInt(t, "Size")
		root, ok2 := dictRef(t, "Root")
		if !ok || !ok2 {
			return &Error{Msg: "trailer without /Size or /Root"}
		}
		d.size, d.root = size, root
		if i := strings.Index(t, "/ID"); i >= 0 {
			if j := strings.Index(t[i:], "]"); j >= 0 {
				d.id = t[i : i+j+1]
			}
		}
		if strings.Contains(t, "/Encrypt") {
			return &Error{Msg: "the PDF is encrypted"}
		}
	}
	if prev, ok := dictInt(t, "Prev"); ok {
		return d.readXref(prev, depth+1)
	}
	return nil
}

func dictInt(dict, key string) (int, bool) {
	re := regexp.MustCompile(`/` + key + `\s+(\d+)`)
	m := re.FindStringSubmatch(dict)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func dictRef(dict, key string) (int, bool) {
	re := regexp.MustCompile(`/` + key + `\s+(\d+)\s+\d+\s+R`)
	m := re.FindStringSubmatch(dict)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// object returns the text between "n 0 obj" and "endobj".
func (d *doc) object(n int) (string, error) {
	off, ok := d.offsets[n]
	if !ok || off >= len(d.b) {
		return "", &Error{Msg: fmt.Sprintf("object %d not found", n)}
	}
	b := d.b[off:]
	head := fmt.Sprintf("%d 0 obj", n)
	if !bytes.HasPrefix(b, []byte(head)) {
		return "", &Error{Msg: fmt.Sprintf("object %d is not where the table says", n)}
	}
	end := bytes.Index(b, []byte("endobj"))
	if end < 0 {
		return "", &Error{Msg: fmt.Sprintf("object %d has no end", n)}
	}
	return strings.TrimSpace(string(b[len(head):end])), nil
}

// insertInDict adds entry before the dictionary's final ">>".
func insertInDict(dict, entry string) (string, error) {
	i := strings.LastIndex(dict, ">>")
	if !strings.HasPrefix(strings.TrimSpace(dict), "<<") || i < 0 || strings.Contains(dict, "stream") {
		return "", &Error{Msg: "unexpected object form"}
	}
	return dict[:i] + " " + entry + " " + dict[i:], nil
}

// addToArray adds ref to the array of key in dict (inline array), or
// creates it; ok is false when the array is an indirect object.
func addToArray(dict, key, ref string) (string, bool, error) {
	re := regexp.MustCompile(`/` + key + `\s*\[`)
	if loc := re.FindStringIndex(dict); loc != nil {
		return dict[:loc[1]] + ref + " " + dict[loc[1]:], true, nil
	}
	if regexp.MustCompile(`/` + key + `\s+\d+\s+\d+\s+R`).MatchString(dict) {
		return dict, false, nil
	}
	out, err := insertInDict(dict, "/"+key+" ["+ref+"]")
	return out, true, err
}

func firstPage(d *doc, pagesRef int) (int, error) {
	n := pagesRef
	for depth := 0; depth < 32; depth++ {
		o, err := d.object(n)
		if err != nil {
			return 0, err
		}
		if regexp.MustCompile(`/Type\s*/Page\b`).MatchString(o) && !strings.Contains(o, "/Kids") {
			return n, nil
		}
		m := regexp.MustCompile(`/Kids\s*\[\s*(\d+)\s+\d+\s+R`).FindStringSubmatch(o)
		if m == nil {
			return 0, &Error{Msg: "no page"}
		}
		n, _ = strconv.Atoi(m[1])
	}
	return 0, &Error{Msg: "page tree too deep"}
}

func pdfString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`, "\r", " ", "\n", " ")
	return "(" + r.Replace(s) + ")"
}

func pdfDate(t time.Time) string {
	return "D:" + t.UTC().Format("20060102150405") + "Z"
}

// signOnce appends one signature to b.
func signOnce(b []byte, s Signer, opt Options, certifyP, seq int) ([]byte, error) {
	d, err := parse(b)
	if err != nil {
		return nil, err
	}
	catalog, err := d.object(d.root)
	if err != nil {
		return nil, err
	}
	pagesRef, ok := dictRef(catalog, "Pages")
	if !ok {
		return nil, &Error{Msg: "catalog without /Pages"}
	}
	pageNum, err := firstPage(d, pagesRef)
	if err != nil {
		return nil, err
	}
	page, err := d.object(pageNum)
	if err != nil {
		return nil, err
	}
	sigNum, fieldNum := d.size, d.size+1
	size := d.size + 2
	field := fmt.Sprintf("%d 0 R", fieldNum)
	changed := map[int]string{}

	// The field goes into the form's /Fields, the widget into the page's /Annots.
	if acro, ok := dictRef(catalog, "AcroForm"); ok {
		form, err := d.object(acro)
		if err != nil {
			return nil, err
		}
		form, inline, err := addToArray(form, "Fields", field)
		if err != nil || !inline {
			return nil, &Error{Msg: "a form whose /Fields is an indirect object"}
		}
		if !strings.Contains(form, "/SigFlags") {
			if form, err = insertInDict(form, "/SigFlags 3"); err != nil {
				return nil, err
			}
		}
		changed[acro] = form
	} else if strings.Contains(catalog, "/AcroForm") {
		re := regexp.MustCompile(`/AcroForm\s*<<`)
		loc := re.FindStringIndex(catalog)
		if loc == nil {
			return nil, &Error{Msg: "unexpected /AcroForm"}
		}
		fi := strings.Index(catalog[loc[1]:], "/Fields")
		if fi < 0 {
			catalog = catalog[:loc[1]] + " /Fields [" + field + "] " + catalog[loc[1]:]
		} else {
			br := strings.Index(catalog[loc[1]+fi:], "[")
			if br < 0 {
				return nil, &Error{Msg: "a form whose /Fields is an indirect object"}
			}
			at := loc[1] + fi + br + 1
			catalog = catalog[:at] + field + " " + catalog[at:]
		}
	} else if catalog, err = insertInDict(catalog, "/AcroForm << /Fields ["+field+"] /SigFlags 3 >>"); err != nil {
		return nil, err
	}
	if certifyP > 0 {
		if strings.Contains(catalog, "/Perms") {
			return nil, &Error{Msg: "the PDF is already certified"}
		}
		// ISO 32000 12.8.2.2: a certification is the document's first
		// signature; one after others would break that rule and Acrobat's
		// trust in it.
		if bytes.Contains(b, []byte("/ByteRange")) {
			return nil, &Error{Msg: "the PDF is already signed, and a certification must be its first signature"}
		}
		if catalog, err = insertInDict(catalog, fmt.Sprintf("/Perms << /DocMDP %d 0 R >>", sigNum)); err != nil {
			return nil, err
		}
	}
	changed[d.root] = catalog
	page, inline, err := addToArray(page, "Annots", field)
	if err != nil {
		return nil, err
	}
	if !inline {
		return nil, &Error{Msg: "a page whose /Annots is an indirect object"}
	}
	changed[pageNum] = page

	ref := ""
	if certifyP > 0 {
		ref = fmt.Sprintf(" /Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams << /Type /TransformParams /P %d /V /1.2 >> >>]", certifyP)
	}
	name := s.Name
	if name == "" {
		name = s.Cert.Subject.CommonName
	}
	hole := contentsSize
	if opt.TSA != nil {
		hole *= 2
	}
	const brPlaceholder = "/ByteRange [0 0000000000 0000000000 0000000000]"
	sigDict := fmt.Sprintf("<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached %s /Contents <%s> /M %s /Name %s%s%s%s >>",
		brPlaceholder, strings.Repeat("0", hole), pdfString(pdfDate(opt.Time)), pdfString(name),
		optEntry("Reason", opt.Reason), optEntry("Location", opt.Location), ref)
	widget := fmt.Sprintf("<< /Type /Annot /Subtype /Widget /FT /Sig /Rect [0 0 0 0] /F 132 /T %s /V %d 0 R /P %d 0 R >>",
		pdfString(fmt.Sprintf("Signature%d", seq)), sigNum, pageNum)

	var buf bytes.Buffer
	buf.Write(b)
	if !bytes.HasSuffix(b, []byte("\n")) {
		buf.WriteByte('\n')
	}
	offs := map[int]int{}
	write := func(n int, body string) {
		offs[n] = buf.Len()
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", n, body)
	}
	write(sigNum, sigDict)
	write(fieldNum, widget)
	for n, body := range changed {
		write(n, body)
	}
	xref := buf.Len()
	buf.WriteString("xref\n0 1\n0000000000 65535 f \n")
	nums := make([]int, 0, len(offs))
	for n := range offs {
		nums = append(nums, n)
	}
	sortInts(nums)
	for _, n := range nums {
		fmt.Fprintf(&buf, "%d 1\n%010d 00000 n \n", n, offs[n])
	}
	idEntry := ""
	if d.id != "" {
		idEntry = " " + d.id
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root %d 0 R /Prev %d%s >>\nstartxref\n%d\n%%%%EOF\n", size, d.root, d.xref, idEntry, xref)
	out := buf.Bytes()

	// The byte range: everything but the hex string of /Contents.
	sigAt := offs[sigNum]
	ci := bytes.Index(out[sigAt:], []byte("/Contents <"))
	start := sigAt + ci + len("/Contents ")
	end := start + hole + 2 // with the angle brackets
	br := fmt.Sprintf("/ByteRange [0 %010d %010d %010d]", start, end, len(out)-end)
	bi := bytes.Index(out[sigAt:], []byte(brPlaceholder))
	copy(out[sigAt+bi:], br)

	signed := make([]byte, 0, len(out)-(end-start))
	signed = append(append(signed, out[:start]...), out[end:]...)
	der, err := cms(signed, s, opt.TSA)
	if err != nil {
		return nil, err
	}
	if hx := hex.EncodeToString(der); len(hx) > hole {
		return nil, fmt.Errorf("certify: signature of %d bytes does not fit", len(der))
	} else {
		copy(out[start+1:], hx)
	}
	return out, nil
}

func optEntry(key, v string) string {
	if v == "" {
		return ""
	}
	return " /" + key + " " + pdfString(v)
}

func sortInts(a []int) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// cms is a detached CMS SignedData of data: SHA-256, signed attributes
// (content type, message digest, signing time), the signer's chain, and
// with a TSA a timestamp token over the signature value.
func cms(data []byte, s Signer, tsa *TSA) ([]byte, error) {
	sd, err := pkcs7.NewSignedData(data)
	if err != nil {
		return nil, err
	}
	sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSHA256)
	if err := sd.AddSignerChain(s.Cert, s.Key, s.Chain, pkcs7.SignerInfoConfig{}); err != nil {
		return nil, fmt.Errorf("certify: %w", err)
	}
	sd.Detach()
	der, err := sd.Finish()
	if err != nil || tsa == nil {
		return der, err
	}
	var ci contentInfo
	var parsed signedData
	if _, err := asn1.Unmarshal(der, &ci); err != nil {
		return nil, err
	}
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &parsed); err != nil || len(parsed.SignerInfos) != 1 {
		return nil, fmt.Errorf("certify: reading back the signature: %v", err)
	}
	token, err := tsa.stamp(parsed.SignerInfos[0].Signature)
	if err != nil {
		return nil, err
	}
	return addUnsignedAttr(der, oidTimeStampToken, token)
}

// digest is the SHA-256 of the signed bytes (for tests and verifiers).
func digest(b []byte) []byte { h := sha256.Sum256(b); return h[:] }
