package semantic_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/airlockdev/airlock/semantic"
)

// Context values are JSON values compared by type; numbers compare by
// their exact decimal value.
func ExampleEqual() {
	fmt.Println(semantic.Equal(json.Number("42"), 42))
	fmt.Println(semantic.Equal(json.Number("42.0"), json.Number("4.2e1")))
	fmt.Println(semantic.Equal(json.Number("42"), "42"))
	fmt.Println(semantic.Equal(json.Number("9007199254740993"), json.Number("9007199254740992")))
	// Output:
	// true
	// true
	// false
	// false
}

// A CEL rule is compiled once and checked against each response; the
// request's integer context value is an int in CEL.
func ExampleNewCEL() {
	r, err := semantic.NewCEL("owner_items", `value.items.all(i, i.owner == request.context.user)`)
	if err != nil {
		panic(err)
	}
	req := semantic.Request{ID: "req-1", Context: map[string]any{"user": 42}}
	for _, owners := range [][]any{{json.Number("42"), json.Number("42")}, {json.Number("42"), json.Number("7")}} {
		var items []any
		for _, o := range owners {
			items = append(items, map[string]any{"owner": o})
		}
		v := r.Check(semantic.Input{Value: map[string]any{"items": items}, Request: req, Now: time.Now()})
		fmt.Println(v == nil)
	}
	// Output:
	// true
	// false
}
