// Run one model on ONNX Runtime (onnxruntime-node, CPU) for
// tests/real_models_test.py, the independent oracle:
//
//   node ort_run.js JOB.json
//
// JOB: {"ort": dir holding node_modules/onnxruntime-node, "model": path,
//       "level": "all" | "disabled" (graph optimisations), "threads": N,
//       "inputs": {name: {"file", "dtype", "dims"}}, "outputs": [names] or
//       null for all, "out_dir": folder}
// Inputs and outputs are raw little-endian element files. Writes
// out_dir/out_K.bin per output and out_dir/outputs.json
// ({"outputs": [{"name", "dtype", "dims", "file"}], "version"}); exits 1
// with ORT's message on stderr when the session or the run fails.
'use strict';
const fs = require('fs');
const path = require('path');

const ARRAYS = {
    float32: Float32Array, float64: Float64Array, float16: Uint16Array,
    int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array,
    int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
    bool: Uint8Array,
};

async function main() {
    const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
    const ort = require(path.join(job.ort, 'node_modules', 'onnxruntime-node'));
    const version = require(path.join(job.ort, 'node_modules', 'onnxruntime-node', 'package.json')).version;
    const session = await ort.InferenceSession.create(job.model, {
        executionProviders: ['cpu'],
        graphOptimizationLevel: job.level || 'all',
        intraOpNumThreads: job.threads || 1,
        interOpNumThreads: 1,
    });
    const feeds = {};
    for (const [name, t] of Object.entries(job.inputs)) {
        const Arr = ARRAYS[t.dtype];
        if (!Arr)
            throw new Error(`input ${name}: dtype ${t.dtype} is not handled here`);
        const buf = fs.readFileSync(t.file);
        const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
        feeds[name] = new ort.Tensor(t.dtype, new Arr(ab), t.dims);
    }
    const names = job.outputs || session.outputNames;
    const out = await session.run(feeds, names);
    fs.mkdirSync(job.out_dir, {recursive: true});
    const list = [];
    names.forEach((name, k) => {
        const t = out[name];
        const file = path.join(job.out_dir, `out_${k}.bin`);
        const d = t.data;
        if (typeof d[0] === 'string' || !ArrayBuffer.isView(d))
            throw new Error(`output ${name}: type ${t.type} is not handled here`);
        fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        list.push({name, dtype: t.type, dims: t.dims.map(Number), file});
    });
    fs.writeFileSync(path.join(job.out_dir, 'outputs.json'), JSON.stringify({outputs: list, version}));
}

main().catch((e) => {
    console.error(String(e && e.message || e).split('\n').slice(0, 6).join('\n'));
    process.exit(1);
});
