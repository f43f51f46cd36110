package proxy_test

import (
	"context"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

// BenchmarkCall: one tools/call of the weather tool (a ~150-byte result)
// from the go-sdk client, directly to the fake stdio server and through the
// proxy (Stdio in-process, strict, the gate checking every result). The
// difference of the two ns/op is the proxy's added latency per call.
func BenchmarkCall(b *testing.B) {
	args := &mcp.CallToolParams{Name: "weather", Arguments: map[string]any{"location": "ok"}}
	run := func(b *testing.B, s *mcp.ClientSession) {
		ctx := context.Background()
		b.ResetTimer()
		for b.Loop() {
			res, err := s.CallTool(ctx, args)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		s, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: fakeCmd()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
	})
	b.Run("proxy", func(b *testing.B) {
		set, err := proxy.LoadContracts("testdata/schemas", gate.Options{})
		if err != nil {
			b.Fatal(err)
		}
		agentIn, toProxy := io.Pipe()
		fromProxy, agentOut := io.Pipe()
		go proxy.Stdio(context.Background(), fakeCmd(), agentIn, agentOut, proxy.Options{Contracts: proxy.NewContracts(set)})
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		s, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: fromProxy, Writer: toProxy}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s)
	})
}
