// Run many small models on ONNX Runtime (onnxruntime-node, CPU) in one
// process for tests/modern/make_corpus.py, the oracle of the generated
// corpus:
//
//   node ort_batch.js JOBS.json
//
// JOBS: {"ort": dir holding node_modules/onnxruntime-node,
//        "jobs": [{"model": path, "inputs": {name: {"file", "dtype", "dims"}},
//                  "out_dir": folder}]}
// Inputs are raw little-endian element files (strings: a JSON list).
// Graph optimisations are off, so each node runs on its own kernel. For
// every job it writes out_dir/result.json: {"outputs": [{"name", "dtype",
// "dims", "file"}]} with out_K.bin (strings: out_K.json) per output, or
// {"error": ORT's message} when the session or the run fails; a failing
// job does not stop the others. Exits 1 only when JOBS cannot be read or
// onnxruntime-node cannot be loaded.
'use strict';
const fs = require('fs');
const path = require('path');

const ARRAYS = {
    float32: Float32Array, float64: Float64Array, float16: Uint16Array,
    int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
    int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
    bool: Uint8Array,
};

function feed(ort, t) {
    if (t.dtype === 'string')
        return new ort.Tensor('string', JSON.parse(fs.readFileSync(t.file, 'utf8')), t.dims);
    const Arr = ARRAYS[t.dtype];
    if (!Arr)
        throw new Error(`input dtype ${t.dtype} is not handled here`);
    const buf = fs.readFileSync(t.file);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    return new ort.Tensor(t.dtype, new Arr(ab), t.dims);
}

async function runJob(ort, job) {
    const session = await ort.InferenceSession.create(job.model, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: 'disabled',
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
    });
    const feeds = {};
    for (const [name, t] of Object.entries(job.inputs))
        feeds[name] = feed(ort, t);
    const out = await session.run(feeds);
    const list = [];
    session.outputNames.forEach((name, k) => {
        const t = out[name];
        const d = t.data;
        let file;
        if (t.type === 'string') {
            file = path.join(job.out_dir, `out_${k}.json`);
            fs.writeFileSync(file, JSON.stringify(Array.from(d)));
        } else if (ARRAYS[t.type] && ArrayBuffer.isView(d)) {
            file = path.join(job.out_dir, `out_${k}.bin`);
            fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        } else {
            throw new Error(`output ${name}: type ${t.type} is not handled here`);
        }
        list.push({name, dtype: t.type, dims: t.dims.map(Number), file});
    });
    if (session.release)
        await session.release();
    return {outputs: list};
}

async function main() {
    const all = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
    const ort = require(path.join(all.ort, 'node_modules', 'onnxruntime-node'));
    for (const job of all.jobs) {
        fs.mkdirSync(job.out_dir, {recursive: true});
        let res;
        try {
            res = await runJob(ort, job);
        } catch (e) {
            res = {error: String(e && e.message || e).split('\n').slice(0, 4).join(' | ')};
        }
        fs.writeFileSync(path.join(job.out_dir, 'result.json'), JSON.stringify(res));
    }
}

main().catch((e) => {
    console.error(String(e && e.message || e).split('\n').slice(0, 6).join('\n'));
    process.exit(1);
});
