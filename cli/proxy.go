package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

type proxyFlags struct {
	schemas, mode, config, unlisted string
	callTimeout                     time.Duration
	sample                          float64
	fixtures                        string
}

func newProxyCmd(e *env) *cobra.Command {
	o := &proxyFlags{}
	cmd := &cobra.Command{
		Use:   "proxy --schemas DIR [flags] -- SERVER [ARG...]",
		Short: "Run an MCP server over stdio behind the gate",
		Long: `proxy starts the MCP server command after -- and speaks MCP over stdio to the agent that
started airlock: every JSON-RPC message passes both ways unchanged, except the tools/call
results of tools with a contract under --schemas, which go through the gate, and tools/list,
whose contracted tools advertise the contract's agent-facing schema as outputSchema.

  --mode strict   the agent gets structuredContent = the success envelope's data (and the
                  same JSON as a text block), or isError: true with the failure envelope
  --mode warn     the agent gets the original result; the verdict is only logged
  --mode off      no checking
  --unlisted      tools without a contract: pass (default; named on stderr), hide, refuse
  --config FILE   YAML: default_mode, unlisted, tools: {NAME: {mode: warn, contract: TOOL}}
  --record-sample RATE --fixtures DIR
                  write that share of contracted tools' results, redacted, to
                  DIR/<tool>/<version>/recorded/ (as airlock record does), for airlock drift

Standard output carries only JSON-RPC; logs go to standard error. A server that exits
answers every pending call with UPSTREAM_UNAVAILABLE and airlock exits 3; a call the
server does not answer within --call-timeout is answered the same way. When standard input
closes, the server is stopped and airlock exits 0. See docs/proxy.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProxy(cmd, e, o, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f := cmd.Flags()
	f.StringVar(&o.schemas, "schemas", "", "the contracts folder (schemas/ by convention)")
	f.StringVar(&o.mode, "mode", "", "strict, warn or off for every contracted tool (default strict; --config may set it per tool)")
	f.StringVar(&o.config, "config", "", "the proxy configuration file (YAML; docs/proxy.md)")
	f.StringVar(&o.unlisted, "unlisted", "", "tools without a contract: pass, hide or refuse (default pass)")
	f.Float64Var(&o.sample, "record-sample", 0, "write this share (0 to 1) of contracted tools' results, redacted, as recorded fixtures under --fixtures")
	f.StringVar(&o.fixtures, "fixtures", "", "the fixture tree --record-sample writes to (<tool>/<version>/recorded/)")
	f.DurationVar(&o.callTimeout, "call-timeout", proxy.DefaultCallTimeout, "how long a call waits for the server before it is answered with UPSTREAM_UNAVAILABLE")
	return cmd
}

func runProxy(cmd *cobra.Command, e *env, o *proxyFlags, args []string) error {
	if len(args) == 0 {
		return usageErr("name the MCP server command after --")
	}
	if o.schemas == "" {
		return usageErr("--schemas is required")
	}
	if o.callTimeout <= 0 {
		return usageErr("--call-timeout must be positive")
	}
	if o.sample < 0 || o.sample > 1 || o.sample != o.sample {
		return usageErr("--record-sample %v: want a share from 0 to 1", o.sample)
	}
	if (o.sample > 0) != (o.fixtures != "") {
		return usageErr("--record-sample and --fixtures go together")
	}
	set, err := proxy.LoadContracts(o.schemas, e.gate)
	if err != nil {
		return err
	}
	opts := proxy.Options{Contracts: proxy.NewContracts(set), CallTimeout: o.callTimeout}
	if o.config != "" {
		if err := e.namedFile("--config", o.config); err != nil {
			return err
		}
		cfg, err := proxy.LoadConfig(o.config)
		if err != nil {
			return err
		}
		if err := cfg.Apply(&opts, set); err != nil {
			return err
		}
		opts.Mode, opts.Unlisted = gate.Mode(cfg.DefaultMode), proxy.Unlisted(cfg.Unlisted)
	}
	if cmd.Flags().Changed("mode") {
		m, err := gate.ParseMode(o.mode)
		if err != nil {
			return usageErr("--mode: %v", err)
		}
		opts.Mode = m
	}
	if cmd.Flags().Changed("unlisted") {
		u, err := proxy.ParseUnlisted(o.unlisted)
		if err != nil {
			return usageErr("--unlisted: %v", err)
		}
		opts.Unlisted = u
	}
	if o.sample > 0 {
		opts.Sample = &proxy.Sampling{Rate: o.sample, FixturesDir: o.fixtures, Server: args}
	}
	stderr := cmd.ErrOrStderr()
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil)).With("component", "airlock proxy")
	if len(set.Tools()) == 0 {
		opts.Logger.Warn("no contracts under --schemas: every tool is unlisted", "schemas", o.schemas)
	}
	server := exec.Command(args[0], args[1:]...)
	server.Stderr = stderr
	err = proxy.Stdio(cmd.Context(), server, cmd.InOrStdin(), cmd.OutOrStdout(), opts)
	if errors.Is(err, proxy.ErrUpstreamClosed) {
		return fmt.Errorf("airlock proxy: %w", err)
	}
	return err
}
