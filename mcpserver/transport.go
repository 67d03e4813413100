package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is the server's stdio transport: newline-delimited JSON-RPC,
// as the SDK's IOTransport reads it, with two differences the server
// needs (issue 45). A line that is not one JSON-RPC message (garbage,
// truncated JSON, a batch, no "jsonrpc", an object id, data after the
// object, nesting too deep, a line over MaxLine) is answered with the
// JSON-RPC error it deserves, and the next line is read: the SDK's
// transport ends the session on it. And at the end of input, every
// request read is answered before Read reports io.EOF (up to Drain): the
// SDK's transport drops the answers of requests written just before the
// client closed the pipe.
type Transport struct {
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one message (DefaultMaxLine when 0); a longer line is
	// skipped without being held and answered with an error.
	MaxLine int
	// Drain bounds the wait for the answers at the end of input
	// (DefaultDrain when 0).
	Drain time.Duration
}

// DefaultMaxLine bounds a message: the largest request a client sends is a
// read_turns list of ids, well under it.
const DefaultMaxLine = 4 << 20

// DefaultDrain is how long the answers to the requests read before the
// end of input are waited for: a tool call is bounded by CallTimeout.
const DefaultDrain = CallTimeout + 5*time.Second

// JSON-RPC error codes (https://www.jsonrpc.org/specification#error_object).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// Connect starts reading In.
func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	c := &conn{out: t.Out, maxLine: t.MaxLine, drain: t.Drain, msgs: make(chan jsonrpc.Message),
		eof: make(chan struct{}), closed: make(chan struct{}), answered: make(chan struct{}, 1),
		pending: map[jsonrpc.ID]bool{}}
	if c.maxLine <= 0 {
		c.maxLine = DefaultMaxLine
	}
	if c.drain <= 0 {
		c.drain = DefaultDrain
	}
	go c.readLoop(bufio.NewReaderSize(t.In, 64<<10))
	return c, nil
}

type conn struct {
	out     io.Writer
	wmu     sync.Mutex
	maxLine int
	drain   time.Duration
	// msgs carries each message read; eof is closed after the last one.
	msgs      chan jsonrpc.Message
	eof       chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
	// pending are the requests read and not answered yet; answered is
	// signalled on each answer.
	mu       sync.Mutex
	pending  map[jsonrpc.ID]bool
	answered chan struct{}
}

func (c *conn) SessionID() string { return "" }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() {
			c.mu.Lock()
			c.pending[r.ID] = true
			c.mu.Unlock()
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case <-c.eof:
	}
	// The client closed its end: answer what was asked, then end.
	deadline := time.NewTimer(c.drain)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return nil, io.EOF
		}
		select {
		case <-c.answered:
		case <-deadline.C:
			return nil, io.EOF
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *conn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if err := c.writeLine(b); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, r.ID)
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return nil
}

func (c *conn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.out.Write(append(b, '\n'))
	return err
}

func (c *conn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// readLoop reads lines until the end of input; the goroutine may outlive
// Close while a read of stdin blocks (the process ends then anyway).
func (c *conn) readLoop(r *bufio.Reader) {
	defer close(c.eof)
	for {
		line, tooLong, err := readLine(r, c.maxLine)
		if tooLong {
			c.replyError(idIn(line), codeInvalidRequest, fmt.Sprintf("message over %d bytes: not read", c.maxLine))
		} else if m := c.decode(line); m != nil {
			select {
			case c.msgs <- m:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// readLine reads one line without its newline; a line over limit is read
// to its end but only its first bytes are kept (tooLong), for its id.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		frag, e := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > limit {
				tooLong = true
				line = append(line, frag[:min(len(frag), max(0, 64<<10-len(line)))]...)
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(e, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, e
	}
}

// decode checks that line is one JSON-RPC 2.0 message and decodes it; a
// line that is not is answered with an error here (nil returned).
func (c *conn) decode(line []byte) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	if !json.Valid(line) {
		c.replyError(nil, codeParseError, "parse error: not one JSON value on the line")
		return nil
	}
	if line[0] != '{' {
		msg := "invalid request: a JSON-RPC message is an object"
		if line[0] == '[' {
			msg = "invalid request: batches are not supported (MCP 2025-06-18 removed JSON-RPC batching)"
		}
		c.replyError(nil, codeInvalidRequest, msg)
		return nil
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &env)
	id := env.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
		c.replyError(nil, codeInvalidRequest, "invalid request: id must be a string or a number")
		return nil
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		c.replyError(id, codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
		return nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.replyError(id, codeInvalidRequest, "invalid request: "+err.Error())
		return nil
	}
	return m
}

// idIn finds the id of a message too long to read, in its first bytes
// (a client sends "jsonrpc", "id" and "method" before "params"); nil when
// it is not there.
func idIn(head []byte) json.RawMessage {
	i := bytes.Index(head, []byte(`"id"`))
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(head[i+4:], " \t")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimLeft(rest[1:], " \t")))
	var id json.RawMessage
	if dec.Decode(&id) != nil || len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		return nil
	}
	return id
}

// replyError writes a JSON-RPC error response (id null when unknown).
func (c *conn) replyError(id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	_ = c.writeLine(b)
}
