package gate

import (
	"errors"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// parse runs the parse stage: strict RFC 8259 + I-JSON (RFC 7493) within
// the contract's limits (see the parse.* reasons in the registry).
//
// A refusal carries the JSON Pointer of where the problem lies beside its
// byte offset (strictjson.Error.Pointer), and for repeated member names the
// pointer of each repeat found, at most maxLocations.
func parse(body []byte, lim Limits, maxLocations int) (any, *refusal) {
	v, err := strictjson.Parse(body, parseLimits(lim))
	if err != nil {
		return nil, parseRefusal(err, maxLocations)
	}
	return v, nil
}

// parseTape is parse laid out on a tape (strictjson.ParseTape): the
// success path's form, which the compiled validator reads without a map
// per object.
func parseTape(body []byte, lim Limits, maxLocations int) (*strictjson.Tape, *refusal) {
	t, err := strictjson.ParseTape(body, parseLimits(lim))
	if err != nil {
		return nil, parseRefusal(err, maxLocations)
	}
	return t, nil
}

func parseLimits(lim Limits) strictjson.Limits {
	return strictjson.Limits{
		MaxDepth:        lim.MaxDepth,
		MaxNumberLength: lim.MaxNumberLength,
		MaxStringLength: lim.MaxStringLength,
		FoldCollisions:  !lim.AllowFoldCollisions,
	}
}

// parseRefusal turns a parse error into the stage's refusal.
func parseRefusal(err error, maxLocations int) *refusal {
	var pe *strictjson.Error
	if !errors.As(err, &pe) {
		return &refusal{reason: ReasonSyntax, offset: -1, message: err.Error()}
	}
	r := &refusal{reason: pe.Reason, offset: pe.Offset, message: pe.Message, instanceLocation: pe.Pointer}
	for _, rep := range pe.Repeats[:min(len(pe.Repeats), maxLocations)] {
		r.instanceLocations = append(r.instanceLocations, rep.Pointer)
	}
	return r
}
