package lint

import (
	"cmp"
	"slices"
	"unicode/utf8"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// Positions: a finding in a schema file is placed at its line and column
// after the walk, every finding of a file in one pass over the file
// (strictjson.PointerOffsets), so placing them costs the file's size once,
// not once per finding.

// placeSchemaFindings sets the line and column of every finding of this
// contract in a schema file (e.findings[first:] whose file was left to
// place).
func (k *contract) placeSchemaFindings(e *emitter, first int) {
	byName := map[string][]int{}
	for i := first; i < len(e.findings); i++ {
		if name, ok := e.unplaced[i]; ok {
			byName[name] = append(byName[name], i)
			delete(e.unplaced, i)
		}
	}
	for name, idx := range byName {
		raw := k.dir.Bytes(name)
		ptrs := make([]string, len(idx))
		for j, i := range idx {
			ptrs[j] = e.findings[i].Pointer
		}
		offs := strictjson.PointerOffsets(raw, ptrs)
		var at []placed
		for _, i := range idx {
			if off, ok := offs[e.findings[i].Pointer]; ok {
				at = append(at, placed{off: off, finding: i})
			}
		}
		sweep(raw, at, func(p placed, line, col int) { e.findings[p.finding].Line, e.findings[p.finding].Column = line, col })
	}
}

// placed is a finding and the byte offset it is at.
type placed struct {
	off     int64
	finding int
}

// sweep calls set with the 1-based line and column (in Unicode code
// points) of every offset of at, in one pass over text: sorting the
// offsets first keeps it linear in the text even when the file is one long
// line.
func sweep(text []byte, at []placed, set func(p placed, line, col int)) {
	slices.SortFunc(at, func(a, b placed) int { return cmp.Compare(a.off, b.off) })
	line, col, pos := 1, 1, 0
	for _, p := range at {
		if p.off < 0 || p.off > int64(len(text)) {
			continue
		}
		for pos < int(p.off) {
			r, n := utf8.DecodeRune(text[pos:])
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			pos += n
		}
		set(p, line, col)
	}
}
