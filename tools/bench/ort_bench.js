// Time one model on ONNX Runtime (the npm package onnxruntime-node, CPU,
// every graph optimisation on), for tools/bench/bench_runtime.py:
//
//   node ort_bench.js MODEL INPUT_NAME DTYPE DIMS RAW_FILE THREADS REPEAT
//
// DIMS is "1,3,224,224", RAW_FILE the input's little-endian elements, DTYPE
// float32 or int64. Prints one JSON line: session creation, the first run
// and the best and median of REPEAT further runs, in milliseconds, plus a
// checksum of the first output (so a broken run cannot pass unnoticed).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
    const [model, name, dtype, dimsText, raw, threads, repeat] = process.argv.slice(2);
    const dims = dimsText.split(',').map(Number);
    const buf = fs.readFileSync(raw);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const data = dtype === 'int64' ? new BigInt64Array(ab) : new Float32Array(ab);
    const now = () => Number(process.hrtime.bigint()) / 1e6;
    let t = now();
    const session = await ort.InferenceSession.create(model, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        intraOpNumThreads: Number(threads),
        interOpNumThreads: 1,
    });
    const createMs = now() - t;
    const feeds = {[name]: new ort.Tensor(dtype, data, dims)};
    t = now();
    let out = await session.run(feeds);
    const firstMs = now() - t;
    const times = [];
    for (let i = 0; i < Number(repeat); i++) {
        t = now();
        out = await session.run(feeds);
        times.push(now() - t);
    }
    times.sort((a, b) => a - b);
    const y = out[session.outputNames[0]].data;
    let sum = 0;
    for (let i = 0; i < y.length; i++)
        sum += Math.abs(Number(y[i]));
    console.log(JSON.stringify({
        create_ms: createMs,
        first_ms: firstMs,
        best_ms: times[0],
        median_ms: times[Math.floor(times.length / 2)],
        abs_sum: sum,
        version: require('onnxruntime-node/package.json').version,
    }));
}

main().catch((e) => {
    console.error(String(e && e.stack || e));
    process.exit(1);
});
