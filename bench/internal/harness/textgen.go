package harness

import (
	"math/rand/v2"
	"strings"
)

// TextGen makes text of realistic words: a Zipf-distributed vocabulary of
// 20,000 made-up words, like the search benchmark's corpus. Every document
// differs, so neither the server's content deduplication nor a cache
// flatters the figures. (Random letter soup would make every word a new
// term, the worst case of any fulltext index and unlike any office's
// documents.)
type TextGen struct {
	r     *rand.Rand
	z     *rand.Zipf
	vocab []string
}

// benchVocab is the shared vocabulary of the text generators.
var benchVocab = func() []string {
	r := rand.New(rand.NewPCG(11, 11))
	syl := []string{"ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "an", "el", "or", "us", "ber", "din", "gar", "hol", "mar", "pen", "quo", "stin", "fe", "ja"}
	seen := map[string]bool{}
	var out []string
	for len(out) < 20000 {
		var b strings.Builder
		for range 1 + r.IntN(4) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()

// NewTextGens returns one generator per worker, each seeded differently.
func NewTextGens(n int) []*TextGen {
	gs := make([]*TextGen, n)
	for i := range gs {
		r := rand.New(rand.NewPCG(rand.Uint64(), uint64(i)))
		gs[i] = &TextGen{r: r, z: rand.NewZipf(r, 1.1, 4, uint64(len(benchVocab)-1)), vocab: benchVocab}
	}
	return gs
}

// Text returns n new bytes of text.
func (g *TextGen) Text(n int) []byte {
	b := make([]byte, 0, n+32)
	for len(b) < n {
		w := g.vocab[g.z.Uint64()]
		if g.r.IntN(12) == 0 {
			b = append(b, ". "...)
		} else if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, w...)
	}
	return b[:n]
}
