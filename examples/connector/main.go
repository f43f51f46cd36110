// Command connector is the smallest connector that embeds airlock's gate:
// it embeds its contract, reads one upstream response body from a file (or
// stdin when none is named), checks it, and prints what the agent may see.
//
//	connector response.json
package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"os"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/semantic"
)

//go:embed contracts
var contracts embed.FS

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := gate.Load(contracts, "contracts/order_status", gate.Options{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	body := stdin
	if len(args) > 0 {
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer f.Close()
		body = f
	}
	call := gate.Call{Request: semantic.Request{ID: "req-1", Context: map[string]any{"order": "ord_42"}}}
	v, err := c.Check(context.Background(), gate.Response{Status: 200, ContentType: "application/json", Body: body}, call)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 3
	}
	fmt.Fprintln(stdout, string(v.Output))
	fmt.Fprintln(stderr, string(v.Audit.JSON()))
	if !v.Admitted {
		return 1
	}
	return 0
}
