package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlockdev/airlock/gate"
)

// Bounds of one newline-delimited JSON-RPC message (the MCP stdio
// transport: one message per line, MCP specification 2025-06-18,
// "Transports", stdio).
const (
	// MessageSlack is what a message may hold beyond the tool result the
	// gate reads (the jsonrpc, id and result wrapper), in bytes: a line
	// may be the largest contract's limits.max_bytes plus MessageSlack.
	MessageSlack = 64 << 10
	// DefaultMaxMessage is the longest line, in bytes, when no contract
	// is loaded: gate.DefaultMaxBytes (1 MiB) plus MessageSlack.
	DefaultMaxMessage = gate.DefaultMaxBytes + MessageSlack
	// maxIDBytes is the longest id value the scanner of an oversized line
	// keeps; a longer one is not an id the proxy sent a call with.
	maxIDBytes = 256
)

// MaxMessage returns the longest line the proxy reads for set: the largest
// limits.max_bytes of its contracts plus MessageSlack, or DefaultMaxMessage
// when the set is empty (or nil).
func MaxMessage(set *ContractSet) int64 {
	var largest int64
	for _, t := range set.Tools() {
		c, _ := set.Get(t)
		largest = max(largest, c.Limits().MaxBytes)
	}
	if largest == 0 {
		return DefaultMaxMessage
	}
	return largest + MessageSlack
}

// TooLargeError is a Read of a line longer than the connection's limit.
// The line was read to its end and discarded, never held whole: Size is
// its length in bytes (without the newline), ID the top-level "id" member
// found while discarding it (not valid when none was found, or it was
// spelled with escapes). The connection keeps serving.
type TooLargeError struct {
	Size  int64
	Limit int64
	ID    jsonrpc.ID
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("a JSON-RPC message of %d bytes is longer than the limit of %d bytes; discarded", e.Size, e.Limit)
}

// BadMessageError is a Read of a line that is not a JSON-RPC 2.0 message
// (garbage on a server's stdout). The line is skipped; the connection keeps
// serving. Line is its first 200 bytes; ID is the line's top-level "id"
// member as an oversized line's is found (TooLargeError), not valid when
// none was: valid JSON nested deeper than the decoder reads still names
// the call it answers. Batch is set when the line is a JSON array (a
// JSON-RPC batch, which MCP 2025-06-18 removed).
type BadMessageError struct {
	Line  []byte
	Err   error
	ID    jsonrpc.ID
	Batch bool
}

func (e *BadMessageError) Error() string {
	return fmt.Sprintf("not a JSON-RPC message (%v): %q", e.Err, e.Line)
}

func (e *BadMessageError) Unwrap() error { return e.Err }

// LineConn is an mcp.Connection over newline-delimited JSON-RPC: a message
// per line read from r, written to w. A line longer than max bytes is
// refused without buffering it (TooLargeError); a line that is not JSON-RPC
// is BadMessageError. Both leave the connection usable. Close closes r and
// w when they are io.Closers. Writes are serialised; each is one line.
type LineConn struct {
	r      *bufio.Reader
	rc, wc io.Closer
	w      io.Writer
	max    int64
	limit  func() int64 // when set, the limit of each line (SetLimit)
	wmu    sync.Mutex
	once   sync.Once
}

// NewLineConn returns a connection reading r and writing w; max is the
// longest line in bytes (0: DefaultMaxMessage).
func NewLineConn(r io.Reader, w io.Writer, max int64) *LineConn {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	c := &LineConn{r: bufio.NewReaderSize(r, 64<<10), w: w, max: max}
	c.rc, _ = r.(io.Closer)
	c.wc, _ = w.(io.Closer)
	return c
}

// SetLimit makes f give the longest line, read before each line (0 or
// less: the limit NewLineConn set): Stdio's server side follows the
// contracts of a reload. Call it before the first Read.
func (c *LineConn) SetLimit(f func() int64) { c.limit = f }

// Read returns the next message. Errors other than *TooLargeError and
// *BadMessageError end the connection (io.EOF when r ended).
func (c *LineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			var sc idScanner
			sc.feed(line)
			t := trimSpace(line)
			return nil, &BadMessageError{Line: line[:min(len(line), 200)], Err: err, ID: sc.id(), Batch: t[0] == '['}
		}
		return msg, nil
	}
}

// readLine reads one line (without its newline) of at most c.max bytes. A
// last line without a newline counts.
func (c *LineConn) readLine() ([]byte, error) {
	var buf []byte
	limit := c.max
	if c.limit != nil {
		if l := c.limit(); l > 0 {
			limit = l
		}
	}
	for {
		frag, err := c.r.ReadSlice('\n')
		if int64(len(buf))+int64(len(frag)) > limit+1 { // +1: the newline
			return nil, c.discard(buf, frag, err, limit)
		}
		buf = append(buf, frag...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(buf) > 0:
			return buf, nil
		case err != nil:
			return nil, err
		}
		return buf[:len(buf)-1], nil
	}
}

// discard reads the rest of an oversized line, scanning it for its id.
func (c *LineConn) discard(buf, frag []byte, err error, limit int64) error {
	var sc idScanner
	sc.feed(buf)
	sc.feed(frag)
	size := int64(len(buf) + len(frag))
	for err == bufio.ErrBufferFull {
		frag, err = c.r.ReadSlice('\n')
		sc.feed(frag)
		size += int64(len(frag))
	}
	if err == nil {
		size-- // the newline
	} else if err != io.EOF {
		return err
	}
	return &TooLargeError{Size: size, Limit: limit, ID: sc.id()}
}

// Write writes msg as one line.
func (c *LineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// writeLine writes data and a newline as one line.
func (c *LineConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close closes the reader and the writer (those that are io.Closers).
func (c *LineConn) Close() error {
	var err error
	c.once.Do(func() {
		if c.wc != nil {
			err = c.wc.Close()
		}
		if c.rc != nil {
			err = errors.Join(err, c.rc.Close())
		}
	})
	return err
}

// SessionID is "" (a stdio connection has no session).
func (c *LineConn) SessionID() string { return "" }

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// idScanner finds the top-level "id" member of a JSON object fed to it in
// pieces, in constant memory: it tracks nesting and strings, keeps the
// last top-level string (a member name candidate, up to 2 bytes plus
// quotes) and, after "id":, the value up to maxIDBytes.
type idScanner struct {
	depth     int
	inString  bool
	escape    bool
	key       []byte // the current top-level string, capped
	keyLen    int
	afterKey  bool // a top-level string just ended
	inID      bool // reading the value of "id"
	idVal     []byte
	idTooLong bool
	done      bool
}

func (s *idScanner) feed(p []byte) {
	for _, b := range p {
		if s.done {
			return
		}
		if s.inID && (s.inString || (b != ',' && b != '}')) {
			if len(s.idVal) < maxIDBytes {
				s.idVal = append(s.idVal, b)
			} else {
				s.idTooLong = true
			}
		}
		if s.inString {
			switch {
			case s.escape:
				s.escape = false
			case b == '\\':
				s.escape = true
			case b == '"':
				s.inString = false
				if s.depth == 1 && !s.inID {
					s.afterKey = true
				}
				continue
			}
			if s.depth == 1 && !s.inID {
				s.keyLen++
				if len(s.key) < 3 {
					s.key = append(s.key, b)
				}
			}
			continue
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			s.inString = true
			s.key, s.keyLen, s.afterKey = s.key[:0], 0, false
			continue
		case ':':
			if s.depth == 1 && s.afterKey && s.keyLen == 2 && string(s.key) == "id" {
				s.inID, s.idVal = true, s.idVal[:0]
			}
		case ',', '}':
			if s.depth == 1 && s.inID {
				s.inID, s.done = false, true
			}
		}
		s.afterKey = false
		switch b {
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
		}
	}
}

// id returns the id found; not valid when none was.
func (s *idScanner) id() jsonrpc.ID {
	if !s.done || s.idTooLong {
		return jsonrpc.ID{}
	}
	var v any
	if json.Unmarshal(trimSpace(s.idVal), &v) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}
