#!/usr/bin/env node
// ONNX Runtime (CPU execution provider) side of the benchmark suite: the same
// model and the same inputs as the oaax-vulkan run, measured the same way.
//
// usage: node ort_bench.js --model M.onnx --inputs DIR [--threads N] [--seconds S]
//                          [--min-iterations N] [--max-iterations N] [--depths 2,3,4]
//                          [--optimized-model OUT.onnx] [--out RESULT.json]
//   DIR/manifest.json: [{"name", "dtype", "shape", "file"}] with raw little-endian data
//   (the format of tools/reference/ort_run.js and oaax-run --inputs).
//   --threads: intraOpNumThreads (default: the machine's cores)
//   --seconds: measuring time per figure; iterations = clamp(seconds / latency, min, max)
//   --optimized-model: ONNX Runtime writes its fully optimized graph there
//     (graphOptimizationLevel "all"), so the caller can count its nodes.
// Prints (and writes to --out) one JSON object:
//   {load_ms, latency_ms: {p50, mean, min, max, n}, throughput: {"<depth>": per_s, ...},
//    threads, ort_version}
// Latency is the wall time of one awaited session.run(). Throughput at depth k
// keeps k run() promises in flight; onnxruntime-node executes a session's run()
// calls one after another on the JS thread (intra-op parallelism only), so
// depth > 1 measures what a host queueing work would get.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function parseArgs(argv) {
  const o = { threads: os.cpus().length, seconds: 10, minIterations: 3, maxIterations: 1000, depths: [] };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i], v = argv[i + 1];
    const need = () => { if (v === undefined) throw new Error(`${k} needs a value`); ++i; return v; };
    const num = () => { const n = Number(need()); if (!(n > 0)) throw new Error(`${k}: '${v}' is not a positive number`); return n; };
    switch (k) {
      case '--model': o.model = need(); break;
      case '--inputs': o.inputs = need(); break;
      case '--threads': o.threads = Math.floor(num()); break;
      case '--seconds': o.seconds = num(); break;
      case '--min-iterations': o.minIterations = Math.floor(num()); break;
      case '--max-iterations': o.maxIterations = Math.floor(num()); break;
      case '--depths': o.depths = need().split(',').filter((s) => s).map((s) => {
        const d = Number(s); if (!(d >= 1 && Number.isInteger(d))) throw new Error(`--depths: '${s}' is not a depth`); return d; });
        break;
      case '--optimized-model': o.optimized = need(); break;
      case '--out': o.out = need(); break;
      default: throw new Error(`unknown argument '${k}'`);
    }
  }
  if (!o.model || !o.inputs) throw new Error('--model and --inputs are required');
  return o;
}

function readFeeds(dir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
  const feeds = {};
  for (const t of manifest) {
    const Arr = ARRAYS[t.dtype];
    if (!Arr) throw new Error(`input '${t.name}': unsupported dtype ${t.dtype}`);
    const buf = fs.readFileSync(path.join(dir, t.file));
    const copy = new Uint8Array(buf.byteLength);
    copy.set(buf);
    feeds[t.name] = new ort.Tensor(t.dtype, new Arr(copy.buffer, 0, copy.byteLength / Arr.BYTES_PER_ELEMENT), t.shape);
  }
  return feeds;
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function summarize(v) {
  const s = [...v].sort((a, b) => a - b);
  const pct = (p) => {
    const pos = (p / 100) * (s.length - 1), lo = Math.floor(pos), hi = Math.min(lo + 1, s.length - 1);
    return s[lo] + (s[hi] - s[lo]) * (pos - lo);
  };
  return { p50: pct(50), mean: s.reduce((a, b) => a + b, 0) / s.length, min: s[0], max: s[s.length - 1], n: s.length };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const feeds = readFeeds(o.inputs);
  const opts = {
    executionProviders: ['cpu'], intraOpNumThreads: o.threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
  };
  if (o.optimized) opts.optimizedModelFilePath = o.optimized;
  const t0 = nowMs();
  const session = await ort.InferenceSession.create(o.model, opts);
  const loadMs = nowMs() - t0;

  // Warm-up (first run allocates), then an estimate that sets the counts.
  await session.run(feeds);
  const e0 = nowMs();
  await session.run(feeds);
  const est = Math.max(nowMs() - e0, 1e-3);
  const count = (min) => Math.max(min, Math.min(o.maxIterations, Math.ceil((o.seconds * 1000) / est)));

  const lat = [];
  for (let i = 0, n = count(o.minIterations); i < n; ++i) {
    const s = nowMs();
    await session.run(feeds);
    lat.push(nowMs() - s);
  }
  const throughput = {};
  for (const d of o.depths) {
    const n = count(Math.max(o.minIterations, 2 * d));
    let sent = 0;
    const s = nowMs();
    const worker = async () => { while (sent < n) { ++sent; await session.run(feeds); } };
    await Promise.all(Array.from({ length: d }, worker));
    throughput[String(d)] = n / ((nowMs() - s) / 1000);
  }
  const result = {
    load_ms: loadMs, latency_ms: summarize(lat), throughput, threads: o.threads,
    ort_version: (ort.env && ort.env.versions && ort.env.versions.common) || 'unknown',
  };
  const text = JSON.stringify(result);
  if (o.out) fs.writeFileSync(o.out, text + '\n');
  console.log(text);
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
