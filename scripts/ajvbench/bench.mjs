// ajvbench times ajv on the inputs BenchmarkParseValidate (gate/bench_test.go)
// wrote into a directory ($AIRLOCK_BENCH_INPUTS): the same schema file and
// the same body bytes. For each timed body it prints Go benchmark lines,
//
//   BenchmarkParseValidate/<name>/ajv  <N>  <ns> ns/op  <MB/s> MB/s  <bytes> body-B
//
// which scripts/benchratio sets beside the engine's .../engine lines.
//
// Setup, outside every timed loop: Ajv2020 (the schema declares draft
// 2020-12) with {strict: true, allErrors: false} (strict mode takes the
// schema as it is: its only type unions are [T, "null"], which strict
// mode allows), ajv-formats' formats in their default full mode, the
// schema compiled once, each body's bytes decoded from UTF-8 to a string
// once. Timed:
// JSON.parse(text) and validate(value). Before timing, every input
// (timed or not) must reach the verdict inputs.json gives it; the script
// exits 1 when one does not.
//
// Usage: node scripts/ajvbench/bench.mjs --inputs DIR --prefix NPM_PREFIX
//        [--benchtime 1s|500ms|100x] [--count N]
// NPM_PREFIX is where ajv and ajv-formats are installed (make bench-deps:
// .ci/node/ajvbench).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

function usage(msg) {
  process.stderr.write(`ajvbench: ${msg}\nusage: node bench.mjs --inputs DIR --prefix NPM_PREFIX [--benchtime 1s|500ms|100x] [--count N]\n`);
  process.exit(2);
}

const opts = { benchtime: "1s", count: "1" };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--?/, "");
  if (!["inputs", "prefix", "benchtime", "count"].includes(key) || i + 1 >= argv.length) {
    usage(`bad argument ${argv[i]}`);
  }
  opts[key] = argv[i + 1];
}
if (!opts.inputs || !opts.prefix) usage("--inputs and --prefix are required");

// benchtime: a duration (Go's "1s", "500ms") or a fixed count ("100x").
let goalNs = 0n, fixedN = 0;
{
  const m = /^(\d+(?:\.\d+)?)(x|ns|us|ms|s)$/.exec(opts.benchtime);
  if (!m) usage(`bad --benchtime ${opts.benchtime}`);
  if (m[2] === "x") fixedN = Number(m[1]);
  else goalNs = BigInt(Math.round(Number(m[1]) * { ns: 1, us: 1e3, ms: 1e6, s: 1e9 }[m[2]]));
}
const count = Number(opts.count);
if (!Number.isInteger(count) || count < 1) usage(`bad --count ${opts.count}`);

const require = createRequire(join(resolve(opts.prefix), "ajvbench.cjs"));
const ajvModule = require("ajv/dist/2020");
const Ajv2020 = ajvModule.default ?? ajvModule;
const formatsModule = require("ajv-formats");
const addFormats = formatsModule.default ?? formatsModule;
const versionOf = (name) => require(`${name}/package.json`).version;

const index = JSON.parse(readFileSync(join(opts.inputs, "inputs.json"), "utf8"));
const ajv = new Ajv2020({ strict: true, allErrors: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(join(opts.inputs, index.schema), "utf8")));

console.log(`# ajv ${versionOf("ajv")}, ajv-formats ${versionOf("ajv-formats")}, node ${process.version}`);

const inputs = index.inputs.map((input) => {
  const bytes = readFileSync(join(opts.inputs, input.file));
  return { ...input, bytes: bytes.length, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
});

let wrong = 0;
for (const input of inputs) {
  const got = validate(JSON.parse(input.text));
  if (got !== input.valid) {
    process.stderr.write(`ajvbench: ${input.name}: ajv says valid=${got}, want valid=${input.valid}: ${JSON.stringify(validate.errors)}\n`);
    wrong++;
  }
}
if (wrong > 0) process.exit(1);

// run times n iterations of the timed loop and returns the nanoseconds.
function run(text, n) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    if (!validate(JSON.parse(text))) throw new Error("refused inside the timed loop");
  }
  return process.hrtime.bigint() - start;
}

// measure grows n the way Go's testing package does (predicted from the
// last run, at most 100 times larger) until a run lasts goalNs, and returns
// that run's iterations and nanoseconds.
function measure(text) {
  if (fixedN > 0) return [fixedN, run(text, fixedN)];
  let n = 1;
  let ns = run(text, n);
  while (ns < goalNs && n < 1e9) {
    const last = n;
    const predicted = ns > 0n ? Number((goalNs * 6n / 5n) * BigInt(n) / ns) : n * 100;
    n = Math.max(Math.min(predicted, last * 100), last + 1);
    ns = run(text, n);
  }
  return [n, ns];
}

for (let c = 0; c < count; c++) {
  for (const input of inputs) {
    if (!input.timed) continue;
    const [n, ns] = measure(input.text);
    const nsPerOp = Number(ns) / n;
    const mbPerS = (input.bytes * n) / 1e6 / (Number(ns) / 1e9);
    console.log(`BenchmarkParseValidate/${input.name}/ajv\t${n}\t${nsPerOp.toFixed(0)} ns/op\t${mbPerS.toFixed(2)} MB/s\t${input.bytes} body-B`);
  }
}
