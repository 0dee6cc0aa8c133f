#!/usr/bin/env node
// Runs an ONNX model with ONNX Runtime (CPU) for xexp's tests and benchmarks.
//
//   node run_ort.js run MODEL INPUTS.json OUT_DIR [--level L] [--threads N]
//       INPUTS.json: [{"name": "X", "type": 1, "dims": [2, 3], "path": "X.bin"}, ...] where type is the
//       ONNX element type (TensorProto.DataType) and path holds the raw little-endian bytes (relative
//       paths are relative to INPUTS.json); STRING tensors give "strings": [...] instead of "path".
//       Writes OUT_DIR/outputs.json in the same format (one entry per line) and OUT_DIR/output_K.bin.
//   node run_ort.js session MODEL [--level L] [--threads N] [--repeat R] [--save-optimized PATH]
//       Only creates the session(s) and prints "session_ms <milliseconds>" (the fastest of R), i.e. ONNX
//       Runtime's own load + optimization time; --save-optimized writes the model ORT optimized.
//   node run_ort.js latency MODEL INPUTS.json [--level L] [--threads N] [--repeat R] [--warmup W]
//       Creates one session, runs it W times (default 1) to warm up, then R times on the inputs and prints
//       "run_ms <median wall milliseconds of one run>" and "cpu_ms <process CPU milliseconds per run>".
//   node run_ort.js latency MODEL OTHER... INPUTS.json [--level L] [--threads N] [--repeat R] [--warmup W]
//       [--batch B]
//       The models side by side in one process, on the same inputs, so that a drift of the machine's
//       load falls on all of them: R rounds (default 1: give more), each running every session B times
//       (default 10) back to back, the session that starts a round rotating. Prints for each model K
//       (0 is MODEL) "run_ms K <median over the rounds of one run's mean time>", and for each other model
//       "paired K <median over the rounds of its time / MODEL's in the same round> <first quartile>
//       <third quartile>" and "max_abs_diff K <largest difference of its outputs from MODEL's>".
//   node run_ort.js batch JOBS.json [--level L] [--threads N]
//       JOBS.json: [{"model": "M.onnx", "inputs": "INPUTS.json", "out": "OUT_DIR"}, ...]: the same as
//       `run` for each job in one process (no start-up cost per model). Prints one JSON line per job in
//       order, {"job": K, "ok": true} or {"job": K, "error": "..."}, and goes on after a failing job.
//       A job with "saveOptimized": "PATH" also writes the model ORT optimized (at level L) there; one
//       with "after": J (an earlier job's index) runs only if job J ran, else gets an error line.
//   node run_ort.js version
//
// L is one of disabled (default: tests check xexp's optimizations, not ORT's), basic, extended, all.
// Every failure prints one "run_ort: error: ..." line on stderr and exits with status 1 (in batch
// mode, a failing job only gets its error line).
'use strict';

const fs = require('fs');
const path = require('path');

// Thrown by fail(): the message is the whole story (no stack).
class RunError extends Error {}

function fail(message) {
  throw new RunError(message);
}

function die(message) {
  process.stderr.write(`run_ort: error: ${message}\n`);
  process.exit(1);
}

let ort;
try {
  ort = require('onnxruntime-node');
} catch (e) {
  die(`cannot load onnxruntime-node (${e.message.split('\n')[0]}); ` +
       `run 'npm install --ignore-scripts' in ${__dirname} (scripts/install_deps.sh does it)`);
}

// ONNX element type number -> [ONNX Runtime JS type, typed array constructor].
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 8: ['string', null], 9: ['bool', Uint8Array],
  10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array], 21: ['uint4', Uint8Array], 22: ['int4', Uint8Array],
};
const TYPE_NUMBERS = Object.fromEntries(Object.entries(TYPES).map(([k, v]) => [v[0], Number(k)]));

function parseArgs(argv) {
  const options = { level: 'disabled', threads: 0, repeat: 1, warmup: 1, batch: 10, saveOptimized: '' };
  const positional = [];
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--level') options.level = next();
    else if (a === '--threads') options.threads = Number(next());
    else if (a === '--repeat') options.repeat = Number(next());
    else if (a === '--warmup') options.warmup = Number(next());
    else if (a === '--save-optimized') options.saveOptimized = next();
    else if (a === '--batch') options.batch = Number(next());
    else if (a.startsWith('--')) fail(`unknown option ${a}`);
    else positional.push(a);
  }
  if (!['disabled', 'basic', 'extended', 'all'].includes(options.level))
    fail(`--level must be disabled, basic, extended or all, not '${options.level}'`);
  if (!Number.isInteger(options.threads) || options.threads < 0) fail('--threads must be a non-negative integer');
  if (!Number.isInteger(options.repeat) || options.repeat < 1) fail('--repeat must be a positive integer');
  if (!Number.isInteger(options.warmup) || options.warmup < 0) fail('--warmup must be a non-negative integer');
  if (!Number.isInteger(options.batch) || options.batch < 1) fail('--batch must be a positive integer');
  return { options, positional };
}

function sessionOptions(options) {
  const o = { executionProviders: ['cpu'], graphOptimizationLevel: options.level, logSeverityLevel: 3 };
  if (options.threads > 0) {
    o.intraOpNumThreads = options.threads;
    o.interOpNumThreads = 1;
  }
  if (options.saveOptimized) o.optimizedModelFilePath = options.saveOptimized;
  return o;
}

function readJson(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    fail(`cannot read ${file}: ${e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(`${file} is not valid JSON: ${e.message}`);
  }
}

function makeFeed(entry, baseDir) {
  const spec = TYPES[entry.type];
  if (!spec) fail(`input '${entry.name}': element type ${entry.type} is not supported by this runner`);
  const [typeName, ArrayType] = spec;
  const dims = entry.dims.map(Number);
  if (typeName === 'string') return new ort.Tensor('string', entry.strings, dims);
  const file = path.resolve(baseDir, entry.path);
  let bytes;
  try {
    bytes = fs.readFileSync(file);
  } catch (e) {
    fail(`input '${entry.name}': cannot read ${file}: ${e.message}`);
  }
  // A small Buffer may start at any offset of a shared pool: copy it into an aligned buffer of its own. A
  // large one has its own buffer already (copying GBs of weights fed as inputs was much of a sweep's time).
  const own = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;
  const buffer = own ? bytes.buffer : bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const count = dims.reduce((a, b) => a * b, 1);
  const expected = typeName === 'uint4' || typeName === 'int4' ? Math.ceil(count / 2) : count * ArrayType.BYTES_PER_ELEMENT;
  if (buffer.byteLength !== expected)
    fail(`input '${entry.name}': ${file} has ${buffer.byteLength} bytes, shape [${dims}] of ${typeName} needs ${expected}`);
  return new ort.Tensor(typeName, new ArrayType(buffer), dims);
}

async function createSession(model, options) {
  try {
    return await ort.InferenceSession.create(model, sessionOptions(options));
  } catch (e) {
    fail(`cannot create a session for ${model}: ${e.message}`);
  }
}

// cache (optional): file, type and shape -> tensor, for the feeds a batch's jobs share (an optimized model
// is fed the original's files); it keeps what this call read, for the next job.
function readFeeds(inputsJson, cache) {
  const manifest = readJson(inputsJson);
  if (!Array.isArray(manifest)) fail(`${inputsJson} must hold a JSON array`);
  const feeds = {};
  const read = new Map();
  for (const entry of manifest) {
    const file = entry.path === undefined ? undefined : path.resolve(path.dirname(inputsJson), entry.path);
    const key = file && `${file} ${entry.type} [${entry.dims}]`;
    feeds[entry.name] = (key && cache && cache.get(key)) || makeFeed(entry, path.dirname(inputsJson));
    if (key) read.set(key, feeds[entry.name]);
  }
  if (cache) {
    cache.clear();
    for (const [key, tensor] of read) cache.set(key, tensor);
  }
  return feeds;
}

async function runSession(session, model, feeds) {
  try {
    return await session.run(feeds);
  } catch (e) {
    fail(`running ${model}: ${e.message}`);
  }
}

async function run(model, inputsJson, outDir, options, feedCache) {
  const feeds = readFeeds(inputsJson, feedCache);
  const session = await createSession(model, options);
  const results = await runSession(session, model, feeds);
  fs.mkdirSync(outDir, { recursive: true });
  const lines = session.outputNames.map((name, k) => {
    const t = results[name];
    const type = TYPE_NUMBERS[t.type];
    if (type === undefined) fail(`output '${name}' has type ${t.type}, not supported by this runner`);
    const entry = { name, type, dims: Array.from(t.dims) };
    if (t.type === 'string') {
      entry.strings = Array.from(t.data);
    } else {
      entry.path = `output_${k}.bin`;
      fs.writeFileSync(path.join(outDir, entry.path), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    }
    return JSON.stringify(entry);
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), `[\n${lines.join(',\n')}\n]\n`);
  await session.release();
}

function errorMessage(e) {
  if (e instanceof RunError) return e.message;
  return e && e.stack ? e.stack.split('\n')[0] : String(e);
}

async function batch(jobsJson, options) {
  const jobs = readJson(jobsJson);
  if (!Array.isArray(jobs)) fail(`${jobsJson} must hold a JSON array`);
  const failed = new Set();
  const feedCache = new Map();
  for (let k = 0; k < jobs.length; ++k) {
    const job = jobs[k];
    let line;
    try {
      if (job.after !== undefined && failed.has(job.after)) fail(`not run: job ${job.after}, which it follows, failed`);
      await run(job.model, job.inputs, job.out, { ...options, saveOptimized: job.saveOptimized || '' }, feedCache);
      line = { job: k, ok: true };
    } catch (e) {
      failed.add(k);
      line = { job: k, error: errorMessage(e).replace(/\n/g, ' ') };
    }
    // written synchronously: a later job that kills the runtime must not take this line with it
    fs.writeSync(1, `${JSON.stringify(line)}\n`);
  }
}

async function sessionTime(model, options) {
  let best = Infinity;
  for (let r = 0; r < options.repeat; ++r) {
    const start = process.hrtime.bigint();
    const session = await createSession(model, options);
    const elapsed = Number(process.hrtime.bigint() - start) / 1e6;
    best = Math.min(best, elapsed);
    await session.release();
  }
  process.stdout.write(`session_ms ${best.toFixed(3)}\n`);
}

async function latency(model, inputsJson, options) {
  const feeds = readFeeds(inputsJson);
  const session = await createSession(model, options);
  for (let w = 0; w < options.warmup; ++w) await runSession(session, model, feeds);
  const times = [];
  const cpuStart = process.cpuUsage();
  for (let r = 0; r < options.repeat; ++r) {
    const start = process.hrtime.bigint();
    await runSession(session, model, feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const cpu = process.cpuUsage(cpuStart);
  process.stdout.write(`run_ms ${median(times).toFixed(4)}\ncpu_ms ${((cpu.user + cpu.system) / 1000 / options.repeat).toFixed(4)}\n`);
}

function median(values) {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

function quantile(values, q) {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor(q * v.length))];
}

// The largest |a - b| over the outputs of two runs (Infinity when their names, types or sizes differ).
function maxAbsDiff(a, b) {
  let worst = 0;
  for (const name of Object.keys(a)) {
    const x = a[name], y = b[name];
    if (!y || x.type !== y.type || x.data.length !== y.data.length) return Infinity;
    for (let k = 0; k < x.data.length; ++k) {
      const u = Number(x.data[k]), v = Number(y.data[k]);
      if (Number.isNaN(u) || Number.isNaN(v)) {
        if (Number.isNaN(u) !== Number.isNaN(v)) return Infinity;
      } else if (u !== v) {
        worst = Math.max(worst, Math.abs(u - v));  // Infinity for infinities that differ
      }
    }
  }
  return worst;
}

async function latencySideBySide(models, inputsJson, options) {
  const feeds = readFeeds(inputsJson);
  const sessions = [];
  for (const model of models) sessions.push(await createSession(model, options));
  const outputs = [];
  for (let k = 0; k < models.length; ++k) {
    for (let w = 0; w < options.warmup; ++w) await runSession(sessions[k], models[k], feeds);
    outputs.push(await runSession(sessions[k], models[k], feeds));
  }
  const perRun = models.map(() => []);
  for (let r = 0; r < options.repeat; ++r) {
    for (let j = 0; j < models.length; ++j) {
      const k = (r + j) % models.length;
      const start = process.hrtime.bigint();
      for (let b = 0; b < options.batch; ++b) await runSession(sessions[k], models[k], feeds);
      perRun[k].push(Number(process.hrtime.bigint() - start) / 1e6 / options.batch);
    }
  }
  let out = '';
  for (let k = 0; k < models.length; ++k) out += `run_ms ${k} ${median(perRun[k]).toFixed(4)}\n`;
  for (let k = 1; k < models.length; ++k) {
    const paired = perRun[k].map((t, r) => t / perRun[0][r]);
    out += `paired ${k} ${median(paired).toFixed(4)} ${quantile(paired, 0.25).toFixed(4)} ${quantile(paired, 0.75).toFixed(4)}\n`;
    out += `max_abs_diff ${k} ${maxAbsDiff(outputs[0], outputs[k]).toExponential(3)}\n`;
  }
  process.stdout.write(out);
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const { options, positional } = parseArgs(rest);
  if (mode === 'run' && positional.length === 3) return run(positional[0], positional[1], positional[2], options);
  if (mode === 'batch' && positional.length === 1) return batch(positional[0], options);
  if (mode === 'session' && positional.length === 1) return sessionTime(positional[0], options);
  if (mode === 'latency' && positional.length === 2) return latency(positional[0], positional[1], options);
  if (mode === 'latency' && positional.length > 2)
    return latencySideBySide(positional.slice(0, -1), positional[positional.length - 1], options);
  if (mode === 'version' && positional.length === 0) return process.stdout.write(`${ort.env.versions.node}\n`);
  fail('usage: run_ort.js run MODEL INPUTS.json OUT_DIR [--level L] [--threads N]\n' +
       '       run_ort.js batch JOBS.json [--level L] [--threads N]\n' +
       '       run_ort.js session MODEL [--level L] [--threads N] [--repeat R] [--save-optimized PATH]\n' +
       '       run_ort.js latency MODEL [OTHER...] INPUTS.json [--level L] [--threads N] [--repeat R] [--warmup W] [--batch B]\n' +
       '       run_ort.js version');
}

main().catch((e) => die(errorMessage(e)));
