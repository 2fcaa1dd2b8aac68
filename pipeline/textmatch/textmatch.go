// Package textmatch finds values in a document's text as FormKiQ's IDP
// mappings ask: what follows a label (EXACT, BEGINS_WITH, CONTAINS, FUZZY:
// OCR splits and garbles labels), whether a condition's text holds, and
// the first number in a value. What is read from where, and into which
// attribute, the pipeline's IDP engine decides.
package textmatch

import (
	"regexp"
	"strconv"
	"strings"
)

// LabelValue finds a line with one of the labels and returns what follows
// the label on that line (or the next non-empty line). With a validation
// regex, the first match in that text is the value.
func LabelValue(text string, labels []string, matching, validation string) string {
	var re *regexp.Regexp
	if validation != "" {
		re, _ = regexp.Compile(validation)
	}
	lines := strings.Split(text, "\n")
	for _, label := range labels {
		ll := strings.ToLower(strings.TrimSpace(label))
		if ll == "" {
			continue
		}
		for i, line := range lines {
			l := strings.ToLower(line)
			at, end := -1, -1
			switch matching {
			case "EXACT":
				k, _, ok := strings.Cut(l, ":")
				if ok && strings.TrimSpace(k) == ll {
					at = strings.Index(l, ll)
				}
			case "BEGINS_WITH":
				if strings.HasPrefix(strings.TrimSpace(l), ll) {
					at = strings.Index(l, ll)
				}
			default: // CONTAINS, FUZZY (case and spacing insensitive)
				at = strings.Index(l, ll)
				if at < 0 && matching == "FUZZY" {
					end = fuzzyEnd(l, ll)
				}
			}
			if at >= 0 {
				end = at + len(ll)
			}
			if end < 0 || end > len(line) {
				continue
			}
			rest := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line[end:]), ":#-= \t"))
			if rest == "" && i+1 < len(lines) {
				rest = strings.TrimSpace(lines[i+1])
			}
			if re != nil {
				rest = re.FindString(rest)
			}
			if rest != "" {
				return rest
			}
		}
	}
	return ""
}

// fuzzyEnd finds label in line ignoring spaces and punctuation (OCR
// splits and garbles labels) and returns where it ends in line, or -1.
func fuzzyEnd(line, label string) int {
	norm := func(s string) (string, []int) {
		var b strings.Builder
		var pos []int
		for i, r := range s {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
				pos = append(pos, i)
			}
		}
		return b.String(), pos
	}
	nl, pos := norm(line)
	nlab, _ := norm(label)
	if nlab == "" {
		return -1
	}
	k := strings.Index(nl, nlab)
	if k < 0 {
		return -1
	}
	return pos[k+len(nlab)-1] + 1
}

// Holds reports whether subject matches want as matching says: EXACT
// (spaces around ignored), BEGINS_WITH, or else contains it. Both are
// given lower case.
func Holds(subject, want, matching string) bool {
	switch matching {
	case "EXACT":
		return strings.TrimSpace(subject) == strings.TrimSpace(want)
	case "BEGINS_WITH":
		return strings.HasPrefix(strings.TrimSpace(subject), want)
	default:
		return strings.Contains(subject, want)
	}
}

var numberRe = regexp.MustCompile(`-?[0-9][0-9,]*(\.[0-9]+)?`)

// Number is the first number in v, its thousands separators dropped:
// "due: 1,250.50 EUR" is 1250.5.
func Number(v string) (float64, error) {
	return strconv.ParseFloat(strings.ReplaceAll(numberRe.FindString(v), ",", ""), 64)
}
