// ort_peer.js — times one ONNX Runtime op for bench/compare. It builds a one-node ONNX model
// itself (a minimal protobuf encoder below: no onnx package is needed), loads the inputs from
// raw little-endian files that compare.py wrote, and runs the session into a preallocated output
// after one warm-up, exactly as ndx bench times ndx.
//
//   node ort_peer.js JOB.json
//
// JOB: {op, attrs: {name: int | string}, opset, threads, repeat,
//       inputs: [{name, type: "float32"|"int64", shape, file}], output: {name, type, shape, file}}
// Prints one JSON line {median_s, times, preallocated}; writes the last run's output to
// output.file.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// ---- protobuf wire format: varints and length-delimited fields ----
function varint(value) {
  let n = BigInt(value);
  const bytes = [];
  while (n >= 0x80n) {
    bytes.push(Number(n & 0x7fn) | 0x80);
    n >>= 7n;
  }
  bytes.push(Number(n));
  return Buffer.from(bytes);
}
const tag = (field, wire) => varint((field << 3) | wire);
const intField = (field, value) => Buffer.concat([tag(field, 0), varint(value)]);
function bytesField(field, payload) {
  const buf = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([tag(field, 2), varint(buf.length), buf]);
}

// ---- the few onnx.proto messages a one-node model needs (field numbers from onnx.proto) ----
const ELEM_TYPE = { float32: 1, int64: 7 };
function valueInfo(name, type, shape) {
  const dims = Buffer.concat(shape.map((d) => bytesField(1, intField(1, d)))); // Dimension.dim_value
  const tensorType = Buffer.concat([intField(1, ELEM_TYPE[type]), bytesField(2, dims)]);
  return Buffer.concat([bytesField(1, name), bytesField(2, bytesField(1, tensorType))]);
}
function attribute(name, value) {
  if (typeof value === 'string') // AttributeProto.s, type STRING (3)
    return Buffer.concat([bytesField(1, name), bytesField(4, value), intField(20, 3)]);
  return Buffer.concat([bytesField(1, name), intField(3, value), intField(20, 2)]); // i, INT
}
function buildModel(job) {
  const node = Buffer.concat([
    ...job.inputs.map((t) => bytesField(1, t.name)),
    bytesField(2, job.output.name),
    bytesField(3, 'node0'),
    bytesField(4, job.op),
    ...Object.entries(job.attrs || {}).map(([k, v]) => bytesField(5, attribute(k, v))),
  ]);
  const graph = Buffer.concat([
    bytesField(1, node),
    bytesField(2, 'ndx_bench'),
    ...job.inputs.map((t) => bytesField(11, valueInfo(t.name, t.type, t.shape))),
    bytesField(12, valueInfo(job.output.name, job.output.type, job.output.shape)),
  ]);
  const opset = Buffer.concat([bytesField(1, ''), intField(2, job.opset || 18)]);
  return Buffer.concat([intField(1, 8), bytesField(2, 'ndx-bench'), bytesField(7, graph),
    bytesField(8, opset)]);
}

function typedArray(type, buf) {
  // A private, aligned copy: Buffer may sit at any offset of a shared pool.
  const ab = new ArrayBuffer(buf.length);
  new Uint8Array(ab).set(buf);
  return type === 'float32' ? new Float32Array(ab) : new BigInt64Array(ab);
}
function emptyArray(type, count) {
  return type === 'float32' ? new Float32Array(count) : new BigInt64Array(count);
}

async function main() {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const session = await ort.InferenceSession.create(buildModel(job), {
    intraOpNumThreads: job.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const t of job.inputs)
    feeds[t.name] = new ort.Tensor(t.type, typedArray(t.type, fs.readFileSync(t.file)), t.shape);
  const count = job.output.shape.reduce((a, b) => a * b, 1);
  const out = new ort.Tensor(job.output.type, emptyArray(job.output.type, count), job.output.shape);
  out.data.fill(job.output.type === 'float32' ? 0 : 0n); // touched before timing
  let preallocated = true;
  let result;
  const runOnce = async () => {
    if (preallocated) {
      try {
        await session.run(feeds, { [job.output.name]: out });
        result = out;
        return;
      } catch (e) {
        preallocated = false; // this build cannot write into a given output: let it allocate
      }
    }
    result = (await session.run(feeds))[job.output.name];
  };
  await runOnce(); // warm-up
  const times = [];
  for (let r = 0; r < job.repeat; r++) {
    const t0 = process.hrtime.bigint();
    await runOnce();
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  const data = result.data;
  fs.writeFileSync(job.output.file, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  const sorted = [...times].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  process.stdout.write(JSON.stringify({ median_s: median, times, preallocated }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`ort_peer: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
