package estimate

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encodings this build counts exactly, offline.
const (
	O200kBase  = "o200k_base"
	Cl100kBase = "cl100k_base"
)

var (
	loaderOnce sync.Once
	encMu      sync.Mutex
	encoders   = map[string]*tiktoken.Tiktoken{}
)

// encoder returns the BPE for an encoding; the BPE ranks are embedded in
// the binary by the offline loader: nothing is ever downloaded.
func encoder(name string) (*tiktoken.Tiktoken, error) {
	loaderOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	encMu.Lock()
	defer encMu.Unlock()
	if e, ok := encoders[name]; ok {
		return e, nil
	}
	switch name {
	case O200kBase, Cl100kBase:
	default:
		return nil, fmt.Errorf("unknown encoding %q (want %s or %s)", name, O200kBase, Cl100kBase)
	}
	e, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", name, err)
	}
	encoders[name] = e
	return e, nil
}

// Text counts s as ordinary text (a literal "<|endoftext|>" is not a
// special token) in the given encoding. It is the one way any package
// sizes a string.
func Text(encoding, s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	e, err := encoder(encoding)
	if err != nil {
		return 0, err
	}
	return len(e.EncodeOrdinary(s)), nil
}
