package gate_test

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/jsonpointer"
	"github.com/airlockdev/airlock/semantic"
)

// contracts holds testdata/contracts/order_status: contract.yaml and its
// two schema files.
//
//go:embed testdata/contracts
var contracts embed.FS

// cancelCount refuses an order cancelled more than once: a check a JSON
// Schema cannot express across fields. The manifest names it with
// "custom: cancel_count".
type cancelCount struct{}

func (cancelCount) Name() string { return "cancel_count" }

func (cancelCount) Check(in semantic.Input) *semantic.Violation {
	n, ok := jsonpointer.Pointer{"cancellations"}.Lookup(in.Value)
	if !ok {
		return nil // optional
	}
	if num, _ := n.(json.Number); num != "0" && num != "1" {
		return &semantic.Violation{Pointer: "/cancellations", Message: "cancelled more than once"}
	}
	return nil
}

var exampleOptions = gate.Options{CustomRules: map[string]semantic.Rule{"cancel_count": cancelCount{}}}

// A connector embeds its contract folders and loads them once at start-up.
func ExampleLoad() {
	c, err := gate.Load(contracts, "testdata/contracts/order_status", exampleOptions)
	if err != nil {
		panic(err)
	}
	fmt.Println(c.Tool(), c.Version(), c.UpstreamVersions(), c.Current())
	// Output: order_status 1.0.0 [v1] v1
}

// LoadAll loads every <tool>/contract.yaml under a folder.
func ExampleLoadAll() {
	all, err := gate.LoadAll(contracts, "testdata/contracts", exampleOptions)
	if err != nil {
		panic(err)
	}
	for _, c := range all {
		fmt.Println(c.Tool())
	}
	// Output: order_status
}

// Check turns an upstream response into the agent output: only contracted
// fields on success (internal_note never reaches the agent), the fixed
// failure envelope otherwise.
func ExampleContract_Check() {
	c, err := gate.Load(contracts, "testdata/contracts/order_status", exampleOptions)
	if err != nil {
		panic(err)
	}
	call := gate.Call{
		Request: semantic.Request{ID: "req-1", Context: map[string]any{"order": "ord_42"}},
		Now:     time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
	}
	for _, body := range []string{
		`{"order_id":"ord_42","state":"shipped","internal_note":"customer is angry"}`,
		`{"order_id":"ord_42","state":"lost"}`,
		`{"order_id":"ord_7","state":"open"}`,
	} {
		v, err := c.Check(context.Background(), gate.Response{
			Status:      200,
			ContentType: "application/json",
			Body:        strings.NewReader(body),
			Source:      "https://orders.example/v1/orders/ord_42?api_key=s3cr3t",
		}, call)
		if err != nil {
			panic(err)
		}
		if v.Admitted {
			fmt.Println(string(v.Output))
		} else {
			fmt.Println(string(v.Output), v.Reason)
		}
	}
	// Output:
	// {"tool":"order_status","request_id":"req-1","outcome":"success","data":{"order_id":"ord_42","state":"shipped"}}
	// {"tool":"order_status","request_id":"req-1","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}} schema.enum
	// {"tool":"order_status","request_id":"req-1","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}} semantic.order_match
}

// A custom rule registered in Options.CustomRules refuses under the name the
// manifest gives it (semantic.not_cancelled_twice); the audit record says
// where and why, for the operator only.
func ExampleOptions_customRules() {
	c, err := gate.Load(contracts, "testdata/contracts/order_status", exampleOptions)
	if err != nil {
		panic(err)
	}
	v, err := c.Check(context.Background(), gate.Response{
		ContentType: "application/json",
		Body:        strings.NewReader(`{"order_id":"ord_42","state":"cancelled","cancellations":2}`),
	}, gate.Call{Request: semantic.Request{ID: "req-2", Context: map[string]any{"order": "ord_42"}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Admitted, v.Reason, v.Audit.InstanceLocation, v.Audit.Message)
	// Output: false semantic.not_cancelled_twice /cancellations cancelled more than once
}

// Shadow mode: in ModeWarn the gate judges as in strict mode, the
// verdict is counted (Options.Observe) and logged, and AgentOutput hands
// the agent the original result; WithMode switches one contract to strict.
func ExampleVerdict_AgentOutput() {
	var refused int
	opts := exampleOptions
	opts.Mode = gate.ModeWarn
	opts.Observe = func(o gate.Observation) {
		if o.Outcome == gate.OutcomeRefused {
			refused++
		}
	}
	warn, err := gate.Load(contracts, "testdata/contracts/order_status", opts)
	if err != nil {
		panic(err)
	}
	strict, err := warn.WithMode(gate.ModeStrict)
	if err != nil {
		panic(err)
	}
	call := gate.Call{
		Request: semantic.Request{ID: "req-1", Context: map[string]any{"order": "ord_42"}},
		Now:     time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
	}
	original := []byte(`{"order_id":"ord_42","state":"lost"}`)
	for _, c := range []*gate.Contract{warn, strict} {
		v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: strings.NewReader(string(original))}, call)
		if err != nil {
			panic(err)
		}
		fmt.Println(v.Mode, v.Reason, string(v.AgentOutput(original)))
	}
	fmt.Println("refusals counted:", refused)
	// Output:
	// warn schema.enum {"order_id":"ord_42","state":"lost"}
	// strict schema.enum {"tool":"order_status","request_id":"req-1","outcome":"failure","error":{"code":"INVALID_RESPONSE","retryable":false}}
	// refusals counted: 2
}
