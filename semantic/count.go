package semantic

import (
	"fmt"
	"strconv"

	"github.com/airlockdev/airlock/jsonpointer"
)

// Count requires the array at Pointer to have exactly as many elements as
// a number says: the number at EqualsPointer in the same value (a total
// the upstream reports beside a page of items), or, when EqualsPointer is
// nil, the request's context value named Key (how many the adapter asked
// for). The number is compared exactly (Equal): 3, 3.0 and 3e0 all say
// three; a string "3", a missing value or a missing key is a violation.
// Neither pointer may hold a "*" token (gate.Load refuses one).
type Count struct {
	RuleName      string
	Pointer       jsonpointer.Pointer
	EqualsPointer jsonpointer.Pointer
	Key           string
}

// Name implements Rule.
func (r Count) Name() string { return r.RuleName }

// Check implements Rule.
func (r Count) Check(in Input) *Violation {
	v := func(msg string) *Violation {
		return &Violation{Rule: r.RuleName, Pointer: r.Pointer.String(), Message: msg}
	}
	x, ok := r.Pointer.Lookup(in.Value)
	if !ok {
		return v("no array at the counted location")
	}
	arr, ok := x.([]any)
	if !ok {
		return v(fmt.Sprintf("the counted location holds %s, not an array", describe(x)))
	}
	var want any
	var from string
	if r.EqualsPointer != nil {
		from = r.EqualsPointer.String()
		if want, ok = r.EqualsPointer.Lookup(in.Value); !ok {
			return &Violation{Rule: r.RuleName, Pointer: from, Message: "no number at the count's location"}
		}
	} else {
		from = fmt.Sprintf("the request's context value %q", r.Key)
		if want, ok = in.Request.Context[r.Key]; !ok {
			return v(fmt.Sprintf("the request has no context value %q", r.Key))
		}
	}
	if _, isNumber := NumberText(want); !isNumber {
		return v(fmt.Sprintf("%s holds %s, not a number", from, describe(want)))
	}
	if !Equal(len(arr), want) {
		return v(fmt.Sprintf("the array has %s elements; %s says %s", strconv.Itoa(len(arr)), from, describe(want)))
	}
	return nil
}
