#!/usr/bin/env node
// Runs ONNX models with ONNX Runtime (CPU) — the reference implementation
// for model outputs in tests and benchmarks.
//
// usage: node ort_run.js MODEL.onnx IN_DIR OUT_DIR
//   IN_DIR/manifest.json: [{"name": ..., "dtype": "float32"|"int64"|..., "shape": [...], "file": "0.bin"}]
//   with the raw little-endian row-major data in IN_DIR/<file>.
//   Writes OUT_DIR/manifest.json (same form, one entry per model output, in
//   the model's output order) and the raw outputs beside it.
//   Prints one line per output: name, dtype, shape. Exits 1 on any error.
// usage: node ort_run.js --cases DIR
//   For every line "MODEL SET [...]" of DIR/cases.txt (the e2e tests' case
//   list, tests/e2e/run_cases.sh) runs DIR/MODEL/model.onnx (one session
//   per model) on the inputs DIR/MODEL/SET and writes DIR/MODEL/ort-SET as
//   above, or DIR/MODEL/ort-SET/error.txt with ONNX Runtime's message when
//   it refuses that set (the caller decides whether that is expected).
// Environment: ORT_SESSION_OPTIONS, JSON of ONNX Runtime's session options
// (e.g. {"graphOptimizationLevel":"disabled"}, so that ONNX Runtime runs the
// graph's own operators rather than its fused forms); the execution provider
// is always the CPU.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function sessionOptions() {
  return { ...JSON.parse(process.env.ORT_SESSION_OPTIONS || '{}'), executionProviders: ['cpu'] };
}

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

// The feeds of IN_DIR/manifest.json as ort.Tensor objects.
function readFeeds(inDir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(inDir, 'manifest.json'), 'utf8'));
  const feeds = {};
  for (const t of manifest) {
    const Arr = ARRAYS[t.dtype];
    if (!Arr) throw new Error(`input '${t.name}': unsupported dtype ${t.dtype}`);
    const buf = fs.readFileSync(path.join(inDir, t.file));
    const copy = new Uint8Array(buf.byteLength);
    copy.set(buf);
    const data = new Arr(copy.buffer, 0, copy.byteLength / Arr.BYTES_PER_ELEMENT);
    feeds[t.name] = new ort.Tensor(t.dtype, data, t.shape);
  }
  return feeds;
}

// Runs SESSION on IN_DIR's inputs and writes OUT_DIR; returns the manifest.
async function runInto(session, inDir, outDir) {
  const results = await session.run(readFeeds(inDir));
  fs.mkdirSync(outDir, { recursive: true });
  const out = session.outputNames.map((name, i) => {
    const t = results[name];
    const file = `${i}.bin`;
    const d = t.data;
    fs.writeFileSync(path.join(outDir, file), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    return { name, dtype: t.type, shape: t.dims.map(Number), file };
  });
  fs.writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify(out, null, 1));
  return out;
}

async function runCases(dir) {
  const sessions = {};
  const lines = fs.readFileSync(path.join(dir, 'cases.txt'), 'utf8').split('\n').filter((l) => l);
  for (const line of lines) {
    const [m, set] = line.split(' ');
    const outDir = path.join(dir, m, `ort-${set}`);
    fs.mkdirSync(outDir, { recursive: true });
    try {
      sessions[m] = sessions[m] ||
        await ort.InferenceSession.create(path.join(dir, m, 'model.onnx'), sessionOptions());
      await runInto(sessions[m], path.join(dir, m, set), outDir);
    } catch (e) {
      fs.writeFileSync(path.join(outDir, 'error.txt'), e.message);
    }
  }
}

async function main() {
  const args = process.argv.slice(2);
  if (args[0] === '--cases' && args.length === 2) return runCases(args[1]);
  const [model, inDir, outDir] = args;
  if (!model || !inDir || !outDir || args.length !== 3) {
    console.error('usage: node ort_run.js MODEL.onnx IN_DIR OUT_DIR | node ort_run.js --cases DIR');
    process.exit(2);
  }
  const session = await ort.InferenceSession.create(model, sessionOptions());
  for (const t of await runInto(session, inDir, outDir)) console.log(`${t.name}\t${t.dtype}\t[${t.shape.join(', ')}]`);
}

main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
