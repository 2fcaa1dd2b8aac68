package ocr

import (
	"bytes"
	"encoding/csv"
	"sort"
	"strconv"
	"strings"
)

// OCR layouts (issue 48 item 4): with ocrOutputType CSV, or ocrParseTypes
// TABLES or FORMS, OCR also reads where each word is (tesseract's TSV of
// the pages of the searchable PDF, upright and straightened) and makes:
//   - CSV: one row per recognized line, "page,line,left,top,width,height,
//     confidence,text" (pixels at 300 dpi from the page's top left;
//     confidence the mean of its words', 0-100), kept as a text/csv
//     artifact (artifactCategory OCR; metadata csvArtifactId);
//   - TABLES: runs of two or more lines that split into the same number
//     (two or more) of cells at wide gaps, as FormKiQ's OcrTable
//     ({headers, data: [[{value}]]}, the first row the headers); result
//     ocr/tables, metadata tables;
//   - FORMS: "Key: value" in a line, or a line of two cells whose first
//     ends with a colon, as FormKiQ's OcrKeyValues ({key, values});
//     result ocr/keyValues, metadata keyValues.

// ocrLine is one recognized line.
type ocrLine struct {
	page, num                int
	left, top, right, bottom int
	conf                     float64
	words                    []ocrWord
}

type ocrWord struct {
	left, right, height int
	text                string
}

func (l *ocrLine) text() string {
	ws := make([]string, len(l.words))
	for i, w := range l.words {
		ws[i] = w.text
	}
	return strings.Join(ws, " ")
}

// parseTSV reads tesseract's TSV of one page into lines, in reading order.
func parseTSV(page int, tsv string) []ocrLine {
	type key struct{ block, par, line int }
	idx := map[key]int{}
	var lines []ocrLine
	var confSum []float64
	for i, row := range strings.Split(tsv, "\n") {
		f := strings.Split(row, "\t")
		if i == 0 || len(f) < 12 || f[0] != "5" {
			continue // the header, and levels other than words
		}
		n := make([]int, 10)
		for j := range n {
			n[j], _ = strconv.Atoi(f[j])
		}
		conf, _ := strconv.ParseFloat(f[10], 64)
		text := strings.TrimSpace(f[11])
		if text == "" || conf < 0 {
			continue
		}
		k := key{n[2], n[3], n[4]}
		j, ok := idx[k]
		if !ok {
			j = len(lines)
			idx[k] = j
			lines = append(lines, ocrLine{page: page, left: n[6], top: n[7], right: n[6] + n[8], bottom: n[7] + n[9]})
			confSum = append(confSum, 0)
		}
		l := &lines[j]
		l.left, l.top = min(l.left, n[6]), min(l.top, n[7])
		l.right, l.bottom = max(l.right, n[6]+n[8]), max(l.bottom, n[7]+n[9])
		l.words = append(l.words, ocrWord{left: n[6], right: n[6] + n[8], height: n[9], text: text})
		confSum[j] += conf
	}
	for i := range lines {
		lines[i].conf = confSum[i] / float64(len(lines[i].words))
	}
	// Tesseract puts table columns in blocks of their own: the rows of a
	// page are its lines by position, top to bottom, then left to right.
	sort.SliceStable(lines, func(a, b int) bool {
		if lines[a].bottom <= lines[b].top || lines[b].bottom <= lines[a].top {
			return lines[a].top < lines[b].top
		}
		return lines[a].left < lines[b].left
	})
	for i := range lines {
		lines[i].num = i + 1
	}
	return lines
}

// rows joins the lines of a page that share a height (a table row that
// tesseract read as one line per column) into one line each.
func rows(lines []ocrLine) []ocrLine {
	var out []ocrLine
	for _, l := range lines {
		if n := len(out); n > 0 && out[n-1].page == l.page {
			p := &out[n-1]
			mid := (l.top + l.bottom) / 2
			if mid > p.top && mid < p.bottom {
				p.words = append(p.words, l.words...)
				p.left, p.right = min(p.left, l.left), max(p.right, l.right)
				p.top, p.bottom = min(p.top, l.top), max(p.bottom, l.bottom)
				continue
			}
		}
		l.words = append([]ocrWord(nil), l.words...)
		out = append(out, l)
	}
	for i := range out {
		sort.SliceStable(out[i].words, func(a, b int) bool { return out[i].words[a].left < out[i].words[b].left })
	}
	return out
}

// cells splits a row at gaps wider than twice its words' median height.
func cells(l ocrLine) []string {
	if len(l.words) == 0 {
		return nil
	}
	hs := make([]int, len(l.words))
	for i, w := range l.words {
		hs[i] = w.height
	}
	sort.Ints(hs)
	gap := 2 * hs[len(hs)/2]
	var out []string
	cur := l.words[0].text
	for i := 1; i < len(l.words); i++ {
		if l.words[i].left-l.words[i-1].right > gap {
			out = append(out, cur)
			cur = l.words[i].text
			continue
		}
		cur += " " + l.words[i].text
	}
	return append(out, cur)
}

// Table is FormKiQ's OcrTable.
type Table struct {
	Headers []string              `json:"headers"`
	Data    [][]map[string]string `json:"data"`
}

// ocrTables finds tables: runs of at least two rows of the same page with
// the same number (at least two) of cells.
func ocrTables(lines []ocrLine) []Table {
	var out []Table
	var run [][]string
	page := 0
	flush := func() {
		if len(run) >= 2 {
			t := Table{Headers: run[0]}
			for _, r := range run {
				row := make([]map[string]string, len(r))
				for i, c := range r {
					row[i] = map[string]string{"value": c}
				}
				t.Data = append(t.Data, row)
			}
			out = append(out, t)
		}
		run = nil
	}
	for _, l := range rows(lines) {
		c := cells(l)
		if len(c) < 2 || l.page != page || len(run) > 0 && len(run[0]) != len(c) {
			flush()
		}
		page = l.page
		if len(c) >= 2 {
			run = append(run, c)
		}
	}
	flush()
	return out
}

// KeyValue is FormKiQ's OcrKeyValues.
type KeyValue struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// ocrKeyValues reads "Key: value" lines and two-cell rows whose first
// cell ends with a colon.
func ocrKeyValues(lines []ocrLine) []KeyValue {
	out := []KeyValue{}
	for _, l := range rows(lines) {
		c := cells(l)
		var k, v string
		switch {
		case len(c) == 2 && strings.HasSuffix(c[0], ":"):
			k, v = strings.TrimSuffix(c[0], ":"), c[1]
		default:
			var ok bool
			if k, v, ok = strings.Cut(l.text(), ":"); !ok {
				continue
			}
		}
		if k, v = strings.TrimSpace(k), strings.TrimSpace(v); k != "" && v != "" && len(k) <= 64 {
			out = append(out, KeyValue{Key: k, Values: []string{v}})
		}
	}
	return out
}

// ocrCSV writes the lines as CSV.
func ocrCSV(lines []ocrLine) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"page", "line", "left", "top", "width", "height", "confidence", "text"})
	for _, l := range lines {
		w.Write([]string{strconv.Itoa(l.page), strconv.Itoa(l.num), strconv.Itoa(l.left), strconv.Itoa(l.top),
			strconv.Itoa(l.right - l.left), strconv.Itoa(l.bottom - l.top), strconv.FormatFloat(l.conf, 'f', 1, 64), l.text()})
	}
	w.Flush()
	return b.Bytes()
}

// Lines are the lines of a reading's pages (Lines).
type Lines []ocrLine

// Lines reads the lines of the pages tesseract read (its TSV, in
// pixels at ocrDPI: a page read at another resolution is scaled).
func (r *Reading) Lines() Lines {
	var lines []ocrLine
	for _, pg := range r.pages {
		ls := parseTSV(pg.n, pg.tsv)
		if pg.dpi > 0 && pg.dpi != ocrDPI {
			f := float64(ocrDPI) / float64(pg.dpi)
			sc := func(v int) int { return int(float64(v)*f + 0.5) }
			for i := range ls {
				l := &ls[i]
				l.left, l.top, l.right, l.bottom = sc(l.left), sc(l.top), sc(l.right), sc(l.bottom)
				for k := range l.words {
					w := &l.words[k]
					w.left, w.right, w.height = sc(w.left), sc(w.right), sc(w.height)
				}
			}
		}
		lines = append(lines, ls...)
	}
	return lines
}

// Tables are the tables found in the lines (ocrTables).
func (ls Lines) Tables() []Table { return ocrTables(ls) }

// KeyValues are the key-value pairs found in the lines (ocrKeyValues).
func (ls Lines) KeyValues() []KeyValue { return ocrKeyValues(ls) }

// CSV is the lines as CSV (ocrCSV).
func (ls Lines) CSV() []byte { return ocrCSV(ls) }
