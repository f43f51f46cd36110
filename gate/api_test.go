package gate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing/fstest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/semantic"
)

// mapContract is order_status as an in-memory fs.FS.
func mapContract() fstest.MapFS {
	out := fstest.MapFS{}
	for _, name := range []string{"contract.yaml", "upstream.v1.schema.json", "agent.schema.json"} {
		b, err := fs.ReadFile(contracts, "testdata/contracts/order_status/"+name)
		Expect(err).NotTo(HaveOccurred())
		out["c/order_status/"+name] = &fstest.MapFile{Data: b, Mode: 0o444}
	}
	return out
}

var orderCall = gate.Call{Request: semantic.Request{ID: "req-1", Context: map[string]any{"order": "ord_42"}}}

func orderResp(body string) gate.Response {
	return gate.Response{ContentType: "application/json", Body: strings.NewReader(body)}
}

var _ = Describe("the connector API", func() {
	var c *gate.Contract
	BeforeEach(func() {
		var err error
		c, err = gate.Load(contracts, "testdata/contracts/order_status", exampleOptions)
		Expect(err).NotTo(HaveOccurred())
	})

	It("checks concurrently from many goroutines without a data race (run with -race)", func() {
		bodies := []string{
			`{"order_id":"ord_42","state":"shipped","internal_note":"x"}`,
			`{"order_id":"ord_42","state":"lost"}`,
			`{"order_id":"ord_42","state":"cancelled","cancellations":3}`,
			`{"order_id":"ord_42",`,
		}
		want := make([][]byte, len(bodies))
		for i, b := range bodies {
			v, err := c.Check(context.Background(), orderResp(b), orderCall)
			Expect(err).NotTo(HaveOccurred())
			want[i] = v.Output
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64*len(bodies))
		for g := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range bodies {
					k := (g + i) % len(bodies)
					v, err := c.Check(context.Background(), orderResp(bodies[k]), orderCall)
					if err != nil {
						errs <- err
						continue
					}
					if string(v.Output) != string(want[k]) {
						errs <- errors.New("different output: " + string(v.Output))
					}
					_ = c.UpstreamVersions()
					p, _ := c.Projection("v1")
					p[0].Pointer[0] = "mutated" // a copy: must not race or change the contract
					_ = c.Limits()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			Expect(err).NotTo(HaveOccurred())
		}
	})

	It("hands out copies: changing what an accessor returned changes nothing", func() {
		vs := c.UpstreamVersions()
		vs[0] = "changed"
		p, ok := c.Projection("v1")
		Expect(ok).To(BeTrue())
		p[0].Field, p[0].Pointer[0] = "changed", "changed"
		m := introspect.Manifest(c)
		m.UpstreamVersions["v1"].Projection["order_id"] = "/changed"
		m.Tool = "changed"
		Expect(c.UpstreamVersions()).To(Equal([]string{"v1"}))
		again, _ := c.Projection("v1")
		Expect(again[0].Field).To(Equal("order_id"))
		Expect(again[0].Pointer.String()).To(Equal("/order_id"))
		Expect(introspect.Manifest(c).UpstreamVersions["v1"].Projection["order_id"]).To(Equal("/order_id"))
		v, err := c.Check(context.Background(), orderResp(`{"order_id":"ord_42","state":"open"}`), orderCall)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(v.Output)).To(ContainSubstring(`"data":{"order_id":"ord_42","state":"open"}`))
	})

	It("returns the context's error, not a verdict, when cancelled", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		v, err := c.Check(ctx, orderResp(`{"order_id":"ord_42","state":"open"}`), orderCall)
		Expect(v).To(BeNil())
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
	})

	It("stops between stages when the context ends midway", func() {
		ctx, cancel := context.WithCancel(context.Background())
		rule := semantic.Rule(cancelOnCheck{cancel})
		k, err := gate.Load(contracts, "testdata/contracts/order_status", gate.Options{CustomRules: map[string]semantic.Rule{"cancel_count": rule}})
		Expect(err).NotTo(HaveOccurred())
		v, err := k.Check(ctx, orderResp(`{"order_id":"ord_42","state":"open"}`), orderCall)
		Expect(v).To(BeNil())
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
	})

	It("loads from any fs.FS, naming files by their path in it", func() {
		fsys := mapContract()
		k, err := gate.Load(fsys, "c/order_status", exampleOptions)
		Expect(err).NotTo(HaveOccurred())
		Expect(k.Tool()).To(Equal("order_status"))

		fsys["c/order_status/agent.schema.json"] = &fstest.MapFile{Data: []byte(`{"type": "object", "type": "object"}`)}
		_, err = gate.Load(fsys, "c/order_status", exampleOptions)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue())
		Expect(ce.File).To(Equal("c/order_status/agent.schema.json"))
		Expect(ce.Line).To(Equal(1))
	})

	It("reads only regular files through the fs.FS", func() {
		fsys := mapContract()
		fsys["c/order_status/agent.schema.json"] = &fstest.MapFile{Data: []byte(`{}`), Mode: fs.ModeNamedPipe}
		_, err := gate.Load(fsys, "c/order_status", exampleOptions)
		var ce *gate.ConfigError
		Expect(errors.As(err, &ce)).To(BeTrue())
		Expect(ce.Error()).To(ContainSubstring("not a regular file"))
	})

	It("refuses a $ref that leaves the folder, even to a file in the same fs.FS", func() {
		fsys := mapContract()
		fsys["c/shared.json"] = &fstest.MapFile{Data: []byte(`{"type": "string"}`)}
		fsys["c/order_status/agent.schema.json"] = &fstest.MapFile{Data: []byte(`{"$ref": "../shared.json"}`)}
		_, err := gate.Load(fsys, "c/order_status", exampleOptions)
		Expect(errors.Is(err, gate.ErrOutsideContract)).To(BeTrue())
	})

	It("checks the tool name against the folder, except at the root of the fs.FS", func() {
		sub, err := fs.Sub(mapContract(), "c/order_status")
		Expect(err).NotTo(HaveOccurred())
		_, err = gate.Load(sub, ".", exampleOptions)
		Expect(err).NotTo(HaveOccurred())
		fsys := mapContract()
		for name, f := range fsys {
			fsys["c/renamed/"+strings.TrimPrefix(name, "c/order_status/")] = f
		}
		_, err = gate.Load(fsys, "c/renamed", exampleOptions)
		Expect(err).To(MatchError(ContainSubstring(`must equal its directory name "renamed"`)))
	})

	It("lets the harness read the validated value, after MCP unwrapping, without parsing again", func() {
		v, err := c.Check(context.Background(), orderResp(`{"order_id":"ord_42","state":"lost","n":1.50}`), orderCall)
		Expect(err).NotTo(HaveOccurred())
		val, ok := introspect.Value(v)
		Expect(ok).To(BeTrue())
		Expect(val).To(HaveKeyWithValue("n", json.Number("1.50")))
		v, err = c.Check(context.Background(), orderResp(`{"order_id":`), orderCall)
		Expect(err).NotTo(HaveOccurred())
		_, ok = introspect.Value(v)
		Expect(ok).To(BeFalse())
		_, ok = introspect.Schema(c, "v1")
		Expect(ok).To(BeTrue())
		_, ok = introspect.Schema(c, "v9")
		Expect(ok).To(BeFalse())
		Expect(introspect.AgentSchema(c)).NotTo(BeNil())
		Expect(introspect.SchemaDocument(c, "agent.schema.json")).To(HaveKey("properties"))
		Expect(introspect.RawProjection(c, "v1", nil)[0].Pointer.String()).To(Equal("/order_id"))
	})
})

// cancelOnCheck cancels its context when it runs: the projection stage must
// then not run.
type cancelOnCheck struct{ cancel context.CancelFunc }

func (cancelOnCheck) Name() string { return "cancel_count" }

func (r cancelOnCheck) Check(semantic.Input) *semantic.Violation {
	r.cancel()
	return nil
}
