package estimate

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// rankFiles are tiktoken-go-loader's rank files, the source of ranks/*.bin.
var rankFiles = map[string]string{
	O200kBase:  "o200k_base.tiktoken",
	Cl100kBase: "cl100k_base.tiktoken",
}

// encodeRankFile encodes the loader's rank file in loadRanks's layout, refusing
// a file whose ranks are not 0, 1, 2, … in order or whose tokens are empty
// or longer than a length byte holds.
func encodeRankFile(file string) ([]byte, error) {
	data, err := assets.Assets.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var lens, arena []byte
	for k, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		tok, rank, ok := bytes.Cut(line, []byte(" "))
		if !ok {
			return nil, fmt.Errorf("%s: malformed line %q", file, line)
		}
		if r, err := strconv.Atoi(string(rank)); err != nil || r != k {
			return nil, fmt.Errorf("%s: line %d has rank %q, want %d", file, k+1, rank, k)
		}
		dec, err := base64.StdEncoding.DecodeString(string(tok))
		if err != nil || len(dec) == 0 || len(dec) > 255 {
			return nil, fmt.Errorf("%s: line %d: token %q (%v)", file, k+1, tok, err)
		}
		lens = append(lens, byte(len(dec)))
		arena = append(arena, dec...)
	}
	out := append([]byte(rankMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[len(rankMagic):], uint32(len(lens)))
	return append(append(out, lens...), arena...), nil
}

// TestRankTables: the embedded tables are the loader's files, decoded.
// CTXFOLD_UPDATE_RANKS=1 rewrites them (after a tiktoken-go-loader
// upgrade).
func TestRankTables(t *testing.T) {
	for _, enc := range Encodings {
		want, err := encodeRankFile(rankFiles[enc])
		if err != nil {
			t.Fatal(err)
		}
		if os.Getenv("CTXFOLD_UPDATE_RANKS") == "1" {
			if err := os.WriteFile(filepath.Join("ranks", enc+".bin"), want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got := *rankBlobs[enc]; got != string(want) {
			t.Fatalf("ranks/%s.bin is not the loader's %s decoded; regenerate with CTXFOLD_UPDATE_RANKS=1 go test ./estimate -run TestRankTables", enc, rankFiles[enc])
		}
	}
}
