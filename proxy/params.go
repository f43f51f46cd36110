package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Bounds of what a session keeps for the agent's requests the server has
// not answered yet.
const (
	// MaxPending is the most requests of one session (a stdio run, an
	// HTTP session) that may wait for the server's answer at once; a
	// request past it is answered with a JSON-RPC error (-32603) and not
	// forwarded.
	MaxPending = 1024
	// MaxPendingArgBytes is the most bytes of tools/call arguments (the
	// scalar members kept for request binding: names and values) that
	// one session's pending calls may hold together; a call past it is
	// answered with a JSON-RPC error (-32603) and not forwarded.
	MaxPendingArgBytes = 16 << 20
	// MaxAgentMessage is the longest line, in bytes, the stdio proxy
	// reads from the agent (a request: tool arguments are not bounded by
	// any result contract); a longer one is answered with a JSON-RPC
	// error (-32600) when its id can be found.
	MaxAgentMessage = 4 << 20
)

// callParams is a tools/call's params as the proxy read them.
type callParams struct {
	name      string
	arguments json.RawMessage // nil when absent
	raw       json.RawMessage // the params re-encoded from what was read
}

// readCallParams reads a tools/call's params strictly: an object whose
// "name" is a string, with member names matched exactly. A member spelled
// as "name" or "arguments" in another case (encoding/json would take it),
// or given twice, is an error: the server (a Node or Python SDK reads the
// exact, last or first member) and the proxy must see one tool. raw is
// the object re-encoded from the members read, in their order, each once.
func readCallParams(params json.RawMessage) (callParams, error) {
	var cp callParams
	dec := json.NewDecoder(bytes.NewReader(params))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return cp, errors.New("tools/call params must be an object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	seen := map[string]bool{}
	haveName := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return cp, fmt.Errorf("tools/call params: %v", err)
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return cp, fmt.Errorf("tools/call params: %v", err)
		}
		for _, want := range []string{"name", "arguments"} {
			if strings.EqualFold(k, want) && k != want {
				return cp, fmt.Errorf("tools/call params: member %q is not %q (member names are case-sensitive)", k, want)
			}
		}
		if seen[k] {
			return cp, fmt.Errorf("tools/call params: member %q given twice", k)
		}
		seen[k] = true
		switch k {
		case "name":
			if err := json.Unmarshal(v, &cp.name); err != nil || v[0] != '"' {
				return cp, errors.New("tools/call params: name must be a string")
			}
			haveName = true
			v, _ = json.Marshal(cp.name)
		case "arguments":
			cp.arguments = v
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	if _, err := dec.Token(); err != nil {
		return cp, fmt.Errorf("tools/call params: %v", err)
	}
	if !haveName {
		return cp, errors.New("tools/call params: no name")
	}
	out.WriteByte('}')
	cp.raw = out.Bytes()
	return cp, nil
}

// argBytes is what a request context holds, in bytes: each member's name
// and value (a scalar's JSON text length, at least 8).
func argBytes(args map[string]any) int {
	n := 0
	for k, v := range args {
		n += len(k) + 8
		switch v := v.(type) {
		case string:
			n += len(v)
		case json.Number:
			n += len(v)
		}
	}
	return n
}
