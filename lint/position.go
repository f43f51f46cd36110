package lint

import (
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
		var at []int64
		var which []int
		for _, i := range idx {
			if off, ok := offs[e.findings[i].Pointer]; ok {
				at, which = append(at, off), append(which, i)
			}
		}
		strictjson.LineColumns(raw, at, func(j, line, col int) { e.findings[which[j]].Line, e.findings[which[j]].Column = line, col })
	}
}
