#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (CPU) — the reference implementation
// for model outputs in tests and benchmarks.
//
// usage: node ort_run.js MODEL.onnx IN_DIR OUT_DIR
//   IN_DIR/manifest.json: [{"name": ..., "dtype": "float32"|"int64"|..., "shape": [...], "file": "0.bin"}]
//   with the raw little-endian row-major data in IN_DIR/<file>.
//   Writes OUT_DIR/manifest.json (same form, one entry per model output, in
//   the model's output order) and the raw outputs beside it.
// Prints one line per output: name, dtype, shape.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

async function main() {
  const [model, inDir, outDir] = process.argv.slice(2);
  if (!model || !inDir || !outDir) {
    console.error('usage: node ort_run.js MODEL.onnx IN_DIR OUT_DIR');
    process.exit(2);
  }
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
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'] });
  const results = await session.run(feeds);
  fs.mkdirSync(outDir, { recursive: true });
  const out = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    const file = `${i}.bin`;
    const d = t.data;
    fs.writeFileSync(path.join(outDir, file), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    out.push({ name, dtype: t.type, shape: t.dims.map(Number), file });
    console.log(`${name}\t${t.type}\t[${t.dims.join(', ')}]`);
  });
  fs.writeFileSync(path.join(outDir, 'manifest.json'), JSON.stringify(out, null, 1));
}

main().catch((e) => { console.error(`ort_run: ${e.message}`); process.exit(1); });
