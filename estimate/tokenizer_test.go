package estimate

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

type vector struct {
	Name   string `json:"name"`
	Text   string `json:"text"`
	O200k  int    `json:"o200k_base"`
	Cl100k int    `json:"cl100k_base"`
}

// loadVectors reads the reference vectors written by testdata/refgen/gen.js
// (counts from the npm package tiktoken, encode_ordinary).
func loadVectors(t testing.TB) []vector {
	t.Helper()
	f, err := os.Open("testdata/vectors.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []vector
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (v vector) want(enc string) int {
	if enc == O200kBase {
		return v.O200k
	}
	return v.Cl100k
}

// TestReferenceVectors: exact equality with the reference on > 1 MB of
// mixed text, for both encodings.
func TestReferenceVectors(t *testing.T) {
	vs := loadVectors(t)
	size := 0
	for _, v := range vs {
		size += len(v.Text)
	}
	if size < 1<<20 {
		t.Fatalf("vectors hold %d bytes of text, want ≥ 1 MB", size)
	}
	for _, enc := range Encodings {
		for _, v := range vs {
			got, err := Text(enc, v.Text)
			if err != nil {
				t.Fatal(err)
			}
			if got != v.want(enc) {
				t.Errorf("%s %s: got %d tokens, reference %d", enc, v.Name, got, v.want(enc))
			}
		}
	}
}

// TestChunkedCountIsExact: splitting at safeSplit boundaries never changes
// a count (chunks far smaller than the production size, so nearly every
// vector is split many times).
func TestChunkedCountIsExact(t *testing.T) {
	vs := loadVectors(t)
	old := chunkBytes
	chunkBytes = 200
	defer func() { chunkBytes = old }()
	splits := 0
	for _, v := range vs {
		if cut := safeSplit(v.Text, chunkBytes); len(v.Text) > chunkBytes && cut < len(v.Text) {
			splits++
		}
	}
	if splits < 50 {
		t.Fatalf("only %d vectors were split; the test would prove nothing", splits)
	}
	for _, enc := range Encodings {
		for _, v := range vs {
			got, err := Text(enc, v.Text)
			if err != nil {
				t.Fatal(err)
			}
			if got != v.want(enc) {
				t.Errorf("%s %s chunked: got %d tokens, reference %d", enc, v.Name, got, v.want(enc))
			}
		}
	}
}

// TestLiteralSpecialTokenIsText: "<|endoftext|>" in a transcript is
// ordinary text, several tokens, not one special token.
func TestLiteralSpecialTokenIsText(t *testing.T) {
	n, err := Text(O200kBase, "<|endoftext|>")
	if err != nil {
		t.Fatal(err)
	}
	if n <= 1 {
		t.Fatalf("literal <|endoftext|> counted as %d token(s); want it split as ordinary text", n)
	}
}

func TestUnknownEncoding(t *testing.T) {
	if _, err := Text("p99k", "x"); err == nil {
		t.Fatal("want an error for an unknown encoding")
	}
	if _, err := Text("p99k", ""); err == nil {
		t.Fatal("want an error for an unknown encoding, even on empty text")
	}
}

// TestLongPieceMergeMatchesSmall: the heap merge for long pieces gives
// exactly the quadratic merge's answer.
func TestLongPieceMergeMatchesSmall(t *testing.T) {
	ranks, err := ranksOf(O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	var m merger
	for _, s := range []string{"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabc",
		strings.Repeat("a", 63), "ZmF0aGVyIG9mIHRoZSBicmlkZQ==aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q", "一二三四五六七八九十一二三四五六七八九十一"} {
		if got, want := m.count(s, ranks), mergeSmall(s, ranks); got != want {
			t.Errorf("%q: heap merge %d, quadratic merge %d", s, got, want)
		}
	}
}

func libraryEncoder(t testing.TB, enc string) *tiktoken.Tiktoken {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	e, err := tiktoken.GetEncoding(enc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// FuzzMatchesLibrary: our driver (per-goroutine pre-splitter, chunking,
// heap merge) counts exactly what pkoukk/tiktoken-go's EncodeOrdinary does.
func FuzzMatchesLibrary(f *testing.F) {
	for _, s := range []string{"hello world", "  \n  \n", "I'm DON'T", "日本語のテキスト", "👨‍👩‍👧‍👦🇯🇵", "a\nBc\n\n Déf", strings.Repeat("ab", 100), "\r\n\t x"} {
		f.Add(s)
	}
	libs := map[string]*tiktoken.Tiktoken{}
	for _, enc := range Encodings {
		libs[enc] = libraryEncoder(f, enc)
	}
	old := chunkBytes
	f.Cleanup(func() { chunkBytes = old })
	chunkBytes = 16
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8Valid(s) {
			t.Skip()
		}
		for _, enc := range Encodings {
			got, err := Text(enc, s)
			if err != nil {
				t.Fatal(err)
			}
			if want := len(libs[enc].EncodeOrdinary(s)); got != want {
				t.Fatalf("%s %q: got %d, library %d", enc, s, got, want)
			}
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestRanksMatchLoader(t *testing.T) {
	for _, enc := range Encodings {
		ours, err := ranksOf(enc)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(rankFiles[enc])
		if err != nil {
			t.Fatal(err)
		}
		if ours.Len() != len(theirs) || ours.Len() < 100000 {
			t.Fatalf("%s: %d ranks, loader %d", enc, ours.Len(), len(theirs))
		}
		for k, v := range theirs {
			if got, ok := ours.get(k); !ok || got != v {
				t.Fatalf("%s: rank of %q: %d (%v), loader %d", enc, k, got, ok, v)
			}
		}
		// And nothing else: a string that is no token is not found.
		for _, s := range []string{"", "\x00\x01\x02\x03\x04 not a token", strings.Repeat("z", 300)} {
			if _, ok := theirs[s]; !ok {
				if r, found := ours.get(s); found {
					t.Fatalf("%s: %q is no token but has rank %d", enc, s, r)
				}
			}
		}
	}
}

// regexpPieces splits s with the encoding's pattern run by regexp2, the
// engine pkoukk/tiktoken-go uses: the oracle for the hand-written splitter.
func regexpPieces(t testing.TB, enc, s string) []string {
	re, err := regexp2.Compile(patterns[enc], regexp2.None)
	if err != nil {
		t.Fatal(err)
	}
	runes := []rune(s)
	var out []string
	m, _ := re.FindRunesMatch(runes)
	for m != nil {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
		m, _ = re.FindNextMatch(m)
	}
	return out
}

func splitterPieces(enc, s string) []string {
	next := splitFunc(enc)
	var out []string
	for i := 0; i < len(s); {
		e := next(s, i)
		out = append(out, s[i:e])
		i = e
	}
	return out
}

var splitterSeeds = []string{"hello world", "  \n  \n", "I'm DON'T we'LL", "'s 'sup x'S", "日本語のテキスト。", "👨‍👩‍👧‍👦🇯🇵 ok",
	"a\nBc\n\n Déf", "HTTPServer iPhone McDonald's", "e\u0301te\u0301 A\u030a", "\u0301abc \u0301 \u0301\u0301X",
	"ǅungla ǈ ʰa ʰA Aʰ Aʰb", "x ſ 'ſ 'K 'K", "12345 ½² ١٢٣", " !! ./\n/ ...\r\n", "\t\tword  \u00a0x\u3000y ",
	"   ", "a  ", " \n", "\r\n\r\n x", "<|endoftext|>", "\xff\xfe bad utf8 \xc3"}

// TestSplitterMatchesRegexp compares the hand-written splitter's pieces
// with regexp2's on the reference vectors and the seeds.
func TestSplitterMatchesRegexp(t *testing.T) {
	texts := append([]string(nil), splitterSeeds...)
	for _, v := range loadVectors(t) {
		texts = append(texts, v.Text)
	}
	for _, enc := range Encodings {
		for k, s := range texts {
			if !utf8Valid(s) {
				continue
			}
			got, want := splitterPieces(enc, s), regexpPieces(t, enc, s)
			if len(got) != len(want) {
				t.Errorf("%s text %d: %d pieces, regexp %d", enc, k, len(got), len(want))
			}
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Errorf("%s text %d piece %d: %q, regexp %q", enc, k, i, got[i], want[i])
					break
				}
			}
		}
	}
}

func FuzzSplitterMatchesRegexp(f *testing.F) {
	for _, s := range splitterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8Valid(s) {
			t.Skip()
		}
		for _, enc := range Encodings {
			got, want := splitterPieces(enc, s), regexpPieces(t, enc, s)
			if len(got) != len(want) {
				t.Fatalf("%s %q: pieces %q, regexp %q", enc, s, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s %q: pieces %q, regexp %q", enc, s, got, want)
				}
			}
		}
	})
}
