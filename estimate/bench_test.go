package estimate

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// Benchmarks (figures in docs/BENCHMARKS.md; bench/estimate.sh runs the
// end-to-end comparison with the npm reference):
//
//	go test ./estimate -run '^$' -bench . -benchtime 3x

func vectorCorpus(b *testing.B) []string {
	vs := loadVectors(b)
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Text
	}
	return out
}

func corpusBytes(texts []string) int64 {
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	return int64(n)
}

// BenchmarkTextVectors: one goroutine, the 1.4 MB reference corpus. Each
// iteration takes a fresh counter, so no merge memo carries over from the
// previous pass over the same text.
func BenchmarkTextVectors(b *testing.B) {
	texts := vectorCorpus(b)
	for _, enc := range Encodings {
		ranks, err := ranksOf(enc)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc, func(b *testing.B) {
			b.SetBytes(corpusBytes(texts))
			for i := 0; i < b.N; i++ {
				c := newCounter(enc, ranks)
				for _, s := range texts {
					c.count(s)
				}
			}
		})
	}
}

// BenchmarkLibraryVectors: pkoukk/tiktoken-go's own EncodeOrdinary on the
// same corpus, one goroutine, for comparison with our driver.
func BenchmarkLibraryVectors(b *testing.B) {
	texts := vectorCorpus(b)
	e := libraryEncoder(b, O200kBase)
	b.SetBytes(corpusBytes(texts))
	for i := 0; i < b.N; i++ {
		for _, s := range texts {
			_ = e.EncodeOrdinary(s)
		}
	}
}

// BenchmarkTextParallel: the corpus split over GOMAXPROCS goroutines, each
// with its own pre-splitter.
func BenchmarkTextParallel(b *testing.B) {
	texts := vectorCorpus(b)
	b.SetBytes(corpusBytes(texts))
	ranks, err := ranksOf(O200kBase)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		err := parallel(context.Background(), len(texts), 0, O200kBase, func(lc *lazyCounter, k int) error {
			if lc.c == nil {
				lc.c = newCounter(O200kBase, ranks) // fresh: no memo from the last pass
			}
			lc.c.count(texts[k])
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLongPieces: single pieces of tens of KB without spaces are slow
// in every BPE; these are the worst cases.
func BenchmarkLongPieces(b *testing.B) {
	vs := loadVectors(b)
	for _, name := range []string{"base64-blob", "long-letter-run", "long-cjk-run", "long-word"} {
		for _, v := range vs {
			if v.Name != name {
				continue
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(v.Text)))
				for i := 0; i < b.N; i++ {
					if _, err := Text(O200kBase, v.Text); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

// benchSession generates a 10k-node session once with bench/estimate-gen,
// or uses $CTXFOLD_BENCH_SESSION (a copy: the cache is rewritten).
func benchSession(b *testing.B) string {
	if dir := os.Getenv("CTXFOLD_BENCH_SESSION"); dir != "" {
		return dir
	}
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ctxfold-estimate-bench-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = filepath.Join(dir, "s10k")
		out, err := exec.Command("go", "run", "../bench/estimate-gen", "-n", "10000", "-o", benchDir).CombinedOutput()
		if err != nil {
			benchErr = err
			b.Log(string(out))
		}
	})
	if benchErr != nil {
		b.Skip("cannot generate the bench session:", benchErr)
	}
	return benchDir
}

func benchView(b *testing.B, dir string, opts Options, cold bool) {
	st, err := os.Stat(filepath.Join(dir, "nodes.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	for i := 0; i < b.N; i++ {
		if cold {
			os.Remove(CachePath(dir, CacheFile))
		}
		g, err := dagOpen(dir)
		if err != nil {
			b.Fatal(err)
		}
		v, err := renderBuild(g)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := View(context.Background(), v, opts); err != nil {
			b.Fatal(err)
		}
		g.S.Close()
	}
}

// BenchmarkViewCold: open, render and estimate a 10k-node session with no
// cache (all BPE work); MB/s is of nodes.jsonl.
func BenchmarkViewCold(b *testing.B) {
	benchView(b, benchSession(b), Options{Model: "gpt-4.1"}, true)
}

// BenchmarkViewWarm: the same with the cache in place (no BPE work).
func BenchmarkViewWarm(b *testing.B) {
	dir := benchSession(b)
	benchView(b, dir, Options{Model: "gpt-4.1"}, true)
	b.ResetTimer()
	benchView(b, dir, Options{Model: "gpt-4.1"}, false)
}

func dagOpen(dir string) (*dag.Graph, error) { return dag.Open(dir, store.OpenOptions{}) }

func renderBuild(g *dag.Graph) (*render.View, error) { return render.Build(g, "", false) }
