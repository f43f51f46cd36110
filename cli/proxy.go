package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/proxy"
)

type proxyFlags struct {
	schemas, mode, config, unlisted  string
	callTimeout                      time.Duration
	sample                           float64
	recordMax                        int
	fixtures                         string
	audit, metrics, listen, upstream string
}

func newProxyCmd(e *env) *cobra.Command {
	o := &proxyFlags{}
	cmd := &cobra.Command{
		Use:   "proxy --schemas DIR [flags] (-- SERVER [ARG...] | --listen ADDR --upstream URL)",
		Short: "Run an MCP server behind the gate (stdio, or streamable HTTP)",
		Long: `proxy starts the MCP server command after -- and speaks MCP over stdio to the agent that
started airlock (or, with --listen ADDR --upstream URL, serves the MCP streamable HTTP
transport on ADDR in front of the server at URL, a session upstream per agent session): every JSON-RPC message passes both ways unchanged, except the tools/call
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
  --record-max N  at most N sampled fixtures per run (default 1000), then sampling stops
  --audit FILE    one JSON line per verdict (the audit record), appended; - is stderr
  --metrics ADDR  Prometheus /metrics and /healthz on ADDR (:0 picks a port, printed)

SIGHUP reloads the contracts under --schemas: all of them or, when one is broken, none
(the old set keeps serving and the error, with file and line, goes to stderr).
SIGINT and SIGTERM stop the proxy (the server is stopped; HTTP requests in flight get 5 s).

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
	f.IntVar(&o.recordMax, "record-max", proxy.DefaultRecordMax, "the most fixtures --record-sample writes in one proxy run; then sampling stops")
	f.StringVar(&o.fixtures, "fixtures", "", "the fixture tree --record-sample writes to (<tool>/<version>/recorded/)")
	f.StringVar(&o.audit, "audit", "", "append one JSON line per verdict (the audit record) to this file; - is standard error (default: none)")
	f.StringVar(&o.metrics, "metrics", "", "serve Prometheus /metrics and /healthz on this address (host:port; :0 picks a port, printed on stderr)")
	f.StringVar(&o.listen, "listen", "", "serve the MCP streamable HTTP transport on this address (host:port) instead of running a server command")
	f.StringVar(&o.upstream, "upstream", "", "with --listen: the MCP server's streamable HTTP endpoint (http or https URL)")
	f.DurationVar(&o.callTimeout, "call-timeout", proxy.DefaultCallTimeout, "how long a call waits for the server before it is answered with UPSTREAM_UNAVAILABLE")
	return cmd
}

func runProxy(cmd *cobra.Command, e *env, o *proxyFlags, args []string) error {
	if o.listen == "" && o.upstream != "" {
		return usageErr("--upstream goes with --listen")
	}
	if o.listen != "" {
		if len(args) > 0 {
			return usageErr("--listen serves an HTTP upstream (--upstream URL): it does not start a server command after --")
		}
		if o.upstream == "" {
			return usageErr("--listen needs --upstream URL, the MCP server's streamable HTTP endpoint")
		}
		if u, err := url.Parse(o.upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageErr("--upstream %q: want an http or https URL of the MCP server's streamable HTTP endpoint", o.upstream)
		}
	} else if len(args) == 0 {
		return usageErr("name the MCP server command after --, or serve HTTP with --listen ADDR --upstream URL")
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
	if o.recordMax <= 0 {
		return usageErr("--record-max %d: want a positive number of fixtures", o.recordMax)
	}
	if (o.sample > 0) != (o.fixtures != "") {
		return usageErr("--record-sample and --fixtures go together")
	}
	set, err := proxy.LoadContracts(o.schemas, e.gate)
	if err != nil {
		return err
	}
	holder := proxy.NewContracts(set)
	opts := proxy.Options{Contracts: holder, CallTimeout: o.callTimeout}
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
	source := args
	if o.listen != "" {
		source = []string{o.upstream}
	}
	if o.sample > 0 {
		opts.Sample = &proxy.Sampling{Rate: o.sample, FixturesDir: o.fixtures, Server: source, Max: o.recordMax}
	}
	stderr := cmd.ErrOrStderr()
	logger := slog.New(slog.NewTextHandler(stderr, nil)).With("component", "airlock proxy")
	opts.Logger = logger
	if len(set.Tools()) == 0 {
		logger.Warn("no contracts under --schemas: every tool is unlisted", "schemas", o.schemas)
	}

	var observers []func(proxy.Observation)
	if o.audit != "" {
		w, closeAudit, err := openAudit(e, o.audit, stderr)
		if err != nil {
			return err
		}
		defer closeAudit()
		observers = append(observers, proxy.NewAuditLogger(w))
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	var metrics *proxy.Metrics
	if o.metrics != "" {
		metrics = proxy.NewMetrics(nil)
		metrics.SetTools(proxy.MetricTools(set, opts.Tools))
		stop, err := serveMetrics(ctx, o.metrics, metrics, stderr)
		if err != nil {
			return err
		}
		defer stop()
		observers = append(observers, metrics.Observe)
	}
	opts.Observe = fanOut(observers)

	stopReload := reloadOnHangup(ctx, holder, o.schemas, e.gate, metrics, opts.Tools, logger)
	defer stopReload()

	if o.listen != "" {
		return serveProxyHTTP(ctx, o, opts, logger, stderr)
	}
	server := exec.Command(args[0], args[1:]...)
	server.Stderr = stderr
	err = proxy.Stdio(ctx, server, cmd.InOrStdin(), cmd.OutOrStdout(), opts)
	if errors.Is(err, proxy.ErrUpstreamClosed) {
		return fmt.Errorf("airlock proxy: %w", err)
	}
	if err == nil && cmd.Context().Err() != nil {
		return cmd.Context().Err()
	}
	return err
}

// fanOut calls every observer in turn; nil when there are none (the
// proxy then builds no Observation at all).
func fanOut(observers []func(proxy.Observation)) func(proxy.Observation) {
	switch len(observers) {
	case 0:
		return nil
	case 1:
		return observers[0]
	}
	return func(ob proxy.Observation) {
		for _, f := range observers {
			f(ob)
		}
	}
}

// openAudit opens --audit's file for appending (created 0600 when
// missing), refusing a symbolic link inside the working directory
// (namedFile). "-" is standard error. Anything but a regular file, a
// character device or a named pipe (a folder, a socket) is refused.
func openAudit(e *env, name string, stderr io.Writer) (io.Writer, func(), error) {
	if name == "-" {
		return stderr, func() {}, nil
	}
	if err := e.namedFile("--audit", name); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, usageErr("--audit: %v", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() && st.Mode()&os.ModeCharDevice == 0 && st.Mode()&os.ModeNamedPipe == 0 {
		f.Close()
		return nil, nil, usageErr("--audit %q: not a regular file", name)
	}
	return f, func() { f.Close() }, nil
}

// metricsShutdown bounds how long the metrics server's in-flight scrapes
// may take once the proxy stops.
const metricsShutdown = 2 * time.Second

// serveMetrics serves m's Handler (/metrics, /healthz) on addr until stop
// or ctx ends; the bound address is printed on stderr (":0" picks a port).
func serveMetrics(ctx context.Context, addr string, m *proxy.Metrics, stderr io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usageErr("--metrics %s: %v", addr, err)
	}
	fmt.Fprintf(stderr, "airlock proxy: metrics on http://%s/metrics\n", ln.Addr())
	srv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			sctx, cancel := context.WithTimeout(context.Background(), metricsShutdown)
			defer cancel()
			_ = srv.Shutdown(sctx)
			<-done
		})
	}
	go func() {
		<-ctx.Done()
		stop()
	}()
	return stop, nil
}

// reloadOnHangup reloads the contracts on every SIGHUP until ctx ends
// (proxy.Contracts.Reload: the new set whole, or the old one kept and the
// error logged with its file and line), counting each in metrics.
func reloadOnHangup(ctx context.Context, holder *proxy.Contracts, dir string, gopts gate.Options, m *proxy.Metrics, mapped map[string]proxy.ToolConfig, logger *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
			}
			err := holder.Reload(dir, gopts)
			if m != nil {
				m.ObserveReload(err)
			}
			if err != nil {
				logger.Error("SIGHUP: contracts not reloaded", "error", err)
				continue
			}
			tools := holder.Load().Tools()
			if m != nil {
				m.SetTools(proxy.MetricTools(holder.Load(), mapped))
			}
			logger.Info("SIGHUP: contracts reloaded", "schemas", dir, "tools", tools)
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		<-done
	}
}

// httpShutdown bounds how long the HTTP front waits for requests in
// flight once SIGINT or SIGTERM arrives.
const httpShutdown = 5 * time.Second

// serveProxyHTTP is --listen ADDR --upstream URL: the streamable HTTP front
// (proxy.NewHTTPHandler) with proxy.Serve and opts for every session,
// until ctx ends (SIGINT, SIGTERM): then requests in flight get up to
// httpShutdown and every session is closed.
func serveProxyHTTP(ctx context.Context, o *proxyFlags, opts proxy.Options, logger *slog.Logger, stderr io.Writer) error {
	h, err := proxy.NewHTTPHandler(proxy.HTTPOptions{
		Upstream: o.upstream,
		Serve: func(ctx context.Context, agent, server mcp.Connection) error {
			return proxy.Serve(ctx, agent, server, opts)
		},
		OnSessionEnd: func(id string, err error) {
			if err != nil {
				logger.Warn("session ended", "session", id, "error", err)
			}
		},
	})
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return usageErr("--listen %s: %v", o.listen, err)
	}
	fmt.Fprintf(stderr, "airlock proxy: listening on http://%s (upstream %s)\n", ln.Addr(), o.upstream)
	// No ReadTimeout or WriteTimeout: either would cut a streamed (SSE)
	// response; the handler bounds each request body by
	// proxy.RequestReadTimeout instead.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: proxy.IdleConnTimeout}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		h.Close()
		return fmt.Errorf("airlock proxy: --listen %s: %w", o.listen, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), httpShutdown)
	defer cancel()
	h.Close()
	_ = srv.Shutdown(sctx)
	return ctx.Err()
}
