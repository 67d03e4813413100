package summarize

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ctxfold/ctxfold/estimate"
)

// OpenAI summarizes through any OpenAI-compatible Chat Completions
// endpoint. Transient failures (429, 5xx, transport errors) are retried with
// backoff; a context-length error switches to summarizing bounded chunks
// and merging them, with smaller chunks on each further overflow. Every
// call counts against a finite budget and one deadline. The key is only
// ever placed in the Authorization header: it is never printed, logged or
// written, and is scrubbed from error text.
type OpenAI struct {
	BaseURL string
	APIKey  string
	Model   string
	// Timeout bounds one HTTP call (default 120s); Deadline the whole
	// summarization (default 10m); MaxCalls the number of calls (default 32).
	Timeout  time.Duration
	Deadline time.Duration
	MaxCalls int
	// Retries per call on 429/5xx (default 4); Backoff the first wait,
	// doubled each retry (default 1s).
	Retries int
	Backoff time.Duration
	// ChunkTokens is the first chunk size after a context-length error
	// (default: half the transcript); MinChunkTokens the smallest (256).
	ChunkTokens    int
	MinChunkTokens int
	// OnRetry, when set, is told of every failed attempt that will be
	// retried, before the wait: five refused connections take 15 s, which
	// the user should not spend wondering (issue 44).
	OnRetry func(attempt, attempts int, wait time.Duration, err error)
	// HTTPClient replaces the default client (tests).
	HTTPClient *http.Client
	// onCall is called before every HTTP attempt (set by Limited).
	onCall func()
}

// Name implements Summarizer.
func (o *OpenAI) Name() string { return "openai" }

// CacheKey implements Summarizer: the endpoint, the model and every limit
// that shapes a summary — never the API key.
func (o *OpenAI) CacheKey() string {
	return fmt.Sprintf("openai\x00%s\x00%s\x00timeout=%s\x00deadline=%s\x00calls=%d\x00retries=%d\x00chunk=%d/%d",
		strings.TrimRight(o.BaseURL, "/"), o.Model, o.Timeout, o.Deadline, o.MaxCalls, o.Retries, o.ChunkTokens, o.MinChunkTokens)
}

// Limited implements Limiter: a copy with MaxCalls and Deadline set to what
// the caller has left. Every HTTP attempt, retries included, counts.
func (o *OpenAI) Limited(maxCalls int, deadline time.Time) (Summarizer, func() int) {
	c := *o
	c.MaxCalls = max(maxCalls, 1)
	if !deadline.IsZero() {
		c.Deadline = max(time.Until(deadline), time.Millisecond)
	}
	var n atomic.Int64
	c.onCall = func() { n.Add(1) }
	return &c, func() int { return int(n.Load()) }
}

// ErrContextLength is a provider's context-length (prompt too long) error.
var ErrContextLength = errors.New("the prompt exceeds the summary model's context length")

type openaiRun struct {
	o      *OpenAI
	client *openai.Client
	calls  int
	enc    string
}

// Summarize implements Summarizer.
func (o *OpenAI) Summarize(ctx context.Context, req Request) (string, error) {
	if o.Model == "" {
		return "", errors.New("openai: no summary model (--summary-model)")
	}
	deadline := o.Deadline
	if deadline <= 0 {
		deadline = 10 * time.Minute
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	cfg := openai.DefaultConfig(o.APIKey)
	if o.BaseURL != "" {
		if err := CheckBaseURL(o.BaseURL); err != nil {
			return "", err
		}
		cfg.BaseURL = strings.TrimRight(o.BaseURL, "/")
	}
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	} else {
		hc.Timeout = o.Timeout
		if hc.Timeout <= 0 {
			hc.Timeout = 120 * time.Second
		}
	}
	hc.CheckRedirect = sameOriginRedirect(hc.CheckRedirect)
	cfg.HTTPClient = &hc
	r := &openaiRun{o: o, client: openai.NewClientWithConfig(cfg), enc: req.Encoding}
	if r.enc == "" {
		r.enc = estimate.O200kBase
	}
	text, err := r.summarize(ctx, req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && parent.Err() == nil {
			err = fmt.Errorf("openai: deadline of %s exceeded after %d calls: %w", deadline, r.calls, err)
		}
		return "", o.scrub(err)
	}
	if o.holdsKey(text) {
		// A summary is stored in nodes.jsonl for good: one that repeats the
		// key (an endpoint echoing its headers, a prompt injection) would
		// persist the secret, so it is a failed summary.
		return "", ErrSummaryHoldsKey
	}
	return text, nil
}

// ErrSummaryHoldsKey is returned for a summary that contains the API key
// (or a recognisable part or encoding of it).
var ErrSummaryHoldsKey = errors.New("openai: the summary contains the API key; refused, nothing is stored")

// ErrCrossOriginRedirect is returned when the endpoint redirects to
// another scheme, host or port: following it would send the key there.
var ErrCrossOriginRedirect = errors.New("openai: the endpoint redirects to another origin; not followed, so the API key is not sent there")

// CheckBaseURL refuses a base URL that holds credentials (user:password@):
// they would be sent, and echoed, in a form the key scrubber cannot know.
// The error never repeats the URL.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("openai: the base URL cannot be parsed")
	}
	if u.User != nil {
		return errors.New("openai: the base URL must not hold credentials (user:password@); give the key in CTXFOLD_API_KEY or OPENAI_API_KEY")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("openai: the base URL must start with http:// or https://, got %q", u.Scheme)
	}
	return nil
}

// sameOriginRedirect follows a redirect only within the first request's
// scheme, host and port. net/http drops Authorization only when the host
// name changes, not the port, so a 307 to another port would carry the key.
func sameOriginRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return ErrCrossOriginRedirect
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("openai: stopped after 10 redirects")
		}
		return nil
	}
}

func (r *openaiRun) summarize(ctx context.Context, req Request) (string, error) {
	transcriptText := transcriptOf(req)
	out, err := r.call(ctx, promptFor(req.Previous, transcriptText, req.MaxTokens, req.Facts))
	if !errors.Is(err, ErrContextLength) {
		return out, err
	}
	// docs/FIT.md: long text is summarized in bounded chunks, and an overflow
	// is retried with smaller chunks.
	parts := splitBlocks(transcriptText)
	size := r.o.ChunkTokens
	if size <= 0 {
		total, terr := estimate.Text(r.enc, transcriptText)
		if terr != nil {
			return "", terr
		}
		size = max(total/2, 1)
	}
	minSize := r.o.MinChunkTokens
	if minSize <= 0 {
		minSize = 256
	}
	for {
		chunks, err := r.chunk(parts, size)
		if err != nil {
			return "", err
		}
		partials := make([]string, 0, len(chunks))
		overflow := false
		for k, c := range chunks {
			s, err := r.call(ctx, chunkPrompt(c, k+1, len(chunks), req.MaxTokens))
			if errors.Is(err, ErrContextLength) {
				overflow = true
				break
			}
			if err != nil {
				return "", err
			}
			partials = append(partials, s)
		}
		if overflow {
			if size/2 < minSize {
				return "", fmt.Errorf("%w even in chunks of %d tokens", ErrContextLength, size)
			}
			size /= 2
			continue
		}
		merged := strings.Builder{}
		for k, p := range partials {
			fmt.Fprintf(&merged, "### part %d of %d (a partial summary)\n%s\n\n", k+1, len(partials), strings.TrimSpace(p))
		}
		return r.call(ctx, promptFor(req.Previous, merged.String(), req.MaxTokens, req.Facts))
	}
}

func chunkPrompt(text string, k, n, maxTokens int) string {
	return fmt.Sprintf(`Summarize part %d of %d of a conversation transcript for a later merge. Keep identifiers,
file paths, commands, ids, numbers and error messages verbatim; quote the user's constraints verbatim;
do not invent anything. Stay under %d tokens. Output only the summary.

<transcript-part>
%s</transcript-part>
`, k, n, maxTokens, text)
}

// splitBlocks splits a transcript at message boundaries ("### " lines).
func splitBlocks(text string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "### ") && cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
		cur.WriteString(line)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// chunk groups blocks into chunks of at most size tokens (a single larger
// block is cut by lines).
func (r *openaiRun) chunk(blocks []string, size int) ([]string, error) {
	var out []string
	var cur strings.Builder
	curTok := 0
	push := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
			curTok = 0
		}
	}
	var add func(s string) error
	add = func(s string) error {
		t, err := estimate.Text(r.enc, s)
		if err != nil {
			return err
		}
		if t > size && strings.Count(s, "\n") > 1 {
			lines := strings.SplitAfter(s, "\n")
			half := len(lines) / 2
			if err := add(strings.Join(lines[:half], "")); err != nil {
				return err
			}
			return add(strings.Join(lines[half:], ""))
		}
		if curTok+t > size {
			push()
		}
		cur.WriteString(s)
		curTok += t
		return nil
	}
	for _, b := range blocks {
		if err := add(b); err != nil {
			return nil, err
		}
	}
	push()
	return out, nil
}

// call makes one Chat Completions request, retrying 429/5xx and transport
// errors with exponential backoff, within the call budget.
func (r *openaiRun) call(ctx context.Context, prompt string) (string, error) {
	o := r.o
	maxCalls := o.MaxCalls
	if maxCalls <= 0 {
		maxCalls = 32
	}
	retries := o.Retries
	if retries <= 0 {
		retries = 4
	}
	backoff := o.Backoff
	if backoff <= 0 {
		backoff = time.Second
	}
	var lastErr error
	for attempt := 0; attempt <= retries; attempt++ {
		if r.calls >= maxCalls {
			if lastErr != nil {
				return "", fmt.Errorf("openai: call budget of %d spent; last error: %w", maxCalls, lastErr)
			}
			return "", fmt.Errorf("openai: call budget of %d spent", maxCalls)
		}
		r.calls++
		if o.onCall != nil {
			o.onCall()
		}
		resp, err := r.client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
			Model:       o.Model,
			Messages:    []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: prompt}},
			Temperature: 0,
		})
		if err == nil {
			if len(resp.Choices) == 0 {
				return "", errors.New("openai: the response has no choices")
			}
			return resp.Choices[0].Message.Content, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if errors.Is(err, ErrCrossOriginRedirect) {
			return "", ErrCrossOriginRedirect
		}
		status, msg, code := apiStatus(err)
		if isContextLength(status, msg, code) {
			return "", ErrContextLength
		}
		if status != 0 && status != http.StatusTooManyRequests && status < 500 {
			return "", fmt.Errorf("openai: %w", err)
		}
		lastErr = err
		if attempt == retries {
			break
		}
		if o.OnRetry != nil {
			o.OnRetry(attempt+1, retries+1, backoff<<attempt, o.scrub(err))
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(backoff << attempt):
		}
	}
	return "", fmt.Errorf("openai: gave up after %d attempts: %w", retries+1, lastErr)
}

func apiStatus(err error) (status int, msg string, code string) {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		c, _ := apiErr.Code.(string)
		return apiErr.HTTPStatusCode, apiErr.Message, c
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode, string(reqErr.Body), ""
	}
	return 0, err.Error(), ""
}

func isContextLength(status int, msg, code string) bool {
	if code == "context_length_exceeded" || code == "string_above_max_length" {
		return true
	}
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
		return false
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"context length", "context_length", "maximum context", "too many tokens", "prompt is too long", "prompt_too_long"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return status == http.StatusRequestEntityTooLarge
}

// scrub removes the key from an error's text: an endpoint may echo it,
// whole or transformed (see redactKey).
func (o *OpenAI) scrub(err error) error {
	msg := err.Error()
	red := redactKey(msg, o.APIKey)
	if red == msg {
		return err
	}
	return &scrubbedError{msg: red, err: err}
}

// holdsKey reports whether s contains the key in any form redactKey
// removes.
func (o *OpenAI) holdsKey(s string) bool {
	return o.APIKey != "" && redactKey(s, o.APIKey) != s
}

// minKeyRun is the shortest run of the key, past its public prefix, that
// counts as a leak: a fragment this long (case-insensitive) identifies the
// key to anyone holding a list of keys, and is long enough not to match
// ordinary text.
const minKeyRun = 8

// redactKey replaces in s every run of at least minKeyRun characters of
// key, compared without case (a key echoed whole, cut to a prefix or
// upper-cased), and every base64 run (standard or URL alphabet, padded or
// not, at any alignment) whose decoding holds such a run (an echoed
// Authorization: Basic header, a key in a JSON blob). A key shorter than
// minKeyRun is matched whole.
func redactKey(s, key string) string {
	if key == "" {
		return s
	}
	s = redactRuns(s, key)
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isBase64Char(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isBase64Char(s[j]) {
			j++
		}
		if j-i >= 12 && decodesToKey(s[i:j], key) {
			b.WriteString(s[last:i])
			b.WriteString("[redacted]")
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactRuns replaces the case-insensitive runs of key in s.
func redactRuns(s, key string) string {
	// A provider's public prefix ("sk-", "sk-proj-", "sk-ant-api03-") is in
	// every key and in ordinary text about keys: a run counts only by the
	// characters it shares past that prefix.
	pp := publicPrefix(key)
	need := min(minKeyRun, len(key)-pp)
	if need <= 0 {
		pp, need = 0, len(key)
	}
	ls, lk := strings.ToLower(s), strings.ToLower(key)
	if len(ls) != len(s) {
		// Lower-casing changed byte offsets (rare scripts): fall back to
		// ASCII folding, which is what a key is made of.
		ls = asciiLower(s)
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(ls); {
		best := 0
		for k := 0; k < len(lk); k++ {
			n := 0
			for i+n < len(ls) && k+n < len(lk) && ls[i+n] == lk[k+n] {
				n++
			}
			if k+n-max(k, pp) >= need {
				best = max(best, n)
			}
		}
		if best > 0 {
			b.WriteString(s[last:i])
			b.WriteString("[redacted]")
			i += best
			last = i
			continue
		}
		i++
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// publicPrefix is the length of a key's leading provider prefix: up to
// its last '-' or '_' within the first 16 characters.
func publicPrefix(key string) int {
	head := key[:min(16, len(key))]
	return strings.LastIndexAny(head, "-_") + 1
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_' || c == '='
}

// decodesToKey tries run at each of the four alignments in both base64
// alphabets and reports whether a decoding holds a run of the key.
func decodesToKey(run, key string) bool {
	run = strings.TrimRight(run, "=")
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for off := 0; off < 4 && off < len(run); off++ {
			part := run[off:]
			if len(part)%4 == 1 {
				// Not a whole number of bytes: the run ends mid-group.
				part = part[:len(part)-1]
			}
			data, err := enc.DecodeString(part)
			if err != nil {
				continue
			}
			if redactRuns(string(data), key) != string(data) {
				return true
			}
		}
	}
	return false
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

// Unwrap keeps errors.Is working (context cancellation) without exposing
// the unscrubbed text through Error.
func (e *scrubbedError) Unwrap() error { return e.err }
