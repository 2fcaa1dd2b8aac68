package certify

import (
	"encoding/asn1"
	"encoding/hex"
	"strconv"
)

// TimestampTokens returns each signature's value and timestamp token
// (nil when it has none), for checks by other verifiers.
func TimestampTokens(pdf []byte) (sigs, tokens [][]byte) {
	for _, m := range reByteRange.FindAllSubmatchIndex(pdf, -1) {
		a, _ := strconv.Atoi(string(pdf[m[4]:m[5]]))
		b, _ := strconv.Atoi(string(pdf[m[6]:m[7]]))
		der, err := hex.DecodeString(string(pdf[a+1 : b-1]))
		if err != nil {
			continue
		}
		var ci contentInfo
		var sd signedData
		if _, err := asn1.Unmarshal(der, &ci); err != nil {
			continue
		}
		if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil || len(sd.SignerInfos) != 1 {
			continue
		}
		si := sd.SignerInfos[0]
		var token []byte
		rest := si.UnsignedAttrs.Bytes
		for len(rest) > 0 {
			var at attribute
			if rest, err = asn1.Unmarshal(rest, &at); err != nil {
				break
			}
			if at.Type.Equal(oidTimeStampToken) {
				token = at.Values.Bytes
			}
		}
		sigs, tokens = append(sigs, si.Signature), append(tokens, token)
	}
	return sigs, tokens
}
