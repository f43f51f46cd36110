package gate

import (
	"errors"

	"github.com/airlockdev/airlock/internal/strictjson"
)

// parse runs the parse stage: strict RFC 8259 + I-JSON (RFC 7493) within
// the contract's limits (see the parse.* reasons in the registry).
func parse(body []byte, lim Limits) (any, *refusal) {
	v, err := strictjson.Parse(body, strictjson.Limits{
		MaxDepth:        lim.MaxDepth,
		MaxNumberLength: lim.MaxNumberLength,
		MaxStringLength: lim.MaxStringLength,
	})
	if err != nil {
		var pe *strictjson.Error
		if !errors.As(err, &pe) {
			return nil, &refusal{reason: ReasonSyntax, offset: -1, message: err.Error()}
		}
		return nil, &refusal{reason: pe.Reason, offset: pe.Offset, message: pe.Message}
	}
	return v, nil
}
