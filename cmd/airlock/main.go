// Command airlock keeps bad tool output out of an AI agent's context. It is
// a few lines around package cli, which holds every subcommand; see
// `airlock --help` and the README.
package main

import (
	"context"
	"os"

	"github.com/airlockdev/airlock/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.Options{}))
}
