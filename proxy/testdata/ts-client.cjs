// A TypeScript SDK MCP client (@modelcontextprotocol/sdk, CommonJS build)
// for the proxy's end-to-end test: argv[2] is JSON
// {"command": [argv...], "calls": [{"name", "arguments"}]}; it starts the
// command over stdio, lists the tools, makes the calls and prints
// {"tools": [{"name", "outputSchema"}], "results": [CallToolResult...]} on
// one line. The SDK validates structuredContent against the advertised
// outputSchema and throws when it does not match; a thrown error exits 1.
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

(async () => {
  const spec = JSON.parse(process.argv[2]);
  const [command, ...args] = spec.command;
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "airlock-proxy-ts-test", version: "1" });
  await client.connect(transport);
  const listed = await client.listTools();
  const results = [];
  for (const c of spec.calls) {
    results.push(await client.callTool({ name: c.name, arguments: c.arguments }));
  }
  await client.close();
  const tools = listed.tools.map((t) => ({ name: t.name, outputSchema: t.outputSchema }));
  process.stdout.write(JSON.stringify({ tools, results }) + "\n");
})().catch((e) => {
  console.error("ts-client:", e && e.stack ? e.stack : e);
  process.exit(1);
});
