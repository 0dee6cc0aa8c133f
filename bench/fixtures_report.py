#!/usr/bin/env python3
"""What `xexp optimize` makes of every exported fixture, and whether ONNX Runtime still computes torch's
numbers on the result.

    XEXP=build/rel/tools/xexp/xexp [PATTERNS=SPEC] [OPTIONS="--target-opset 23"] /usr/bin/python3 bench/fixtures_report.py [MODEL.onnx ...]

Models (default: every .onnx of tests/data/models and ../shared/models that has a NAME.json beside it
naming its input files and torch's outputs). For each one it runs `xexp optimize MODEL -o OUT` (with
`--patterns SPEC` when PATTERNS is set, and the options of OPTIONS), then ONNX Runtime (tests/ort/run_ort.js, CPU, its own optimizations
disabled) on the original and on OUT, and ONNX Runtime at level 'extended' on the original to count the
nodes it leaves. It prints, per model: nodes before, after xexp and after ONNX Runtime 'extended', the
attention and rotary contrib ops xexp produced, and the largest |difference| from torch's expected outputs
of the original and of the optimized model; then the op histogram after xexp. An optimized model more
than 1e-4 away from torch is marked WRONG, one ONNX Runtime cannot load or run "ORT failed". KEEP=1 keeps the work files (optimized models, outputs). A benchmark tool, not a test: it exits 0 whatever it finds.
Needs Debian's python3 with numpy and onnx (python3-numpy, python3-onnx) and node with tests/ort's modules.
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy
import onnx

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNER = os.path.join(HERE, "tests", "ort", "run_ort.js")
SHARED = os.environ.get("XEXP_SHARED_DIR", os.path.join(HERE, "..", "shared"))
XEXP = os.environ.get("XEXP", os.path.join(HERE, "build", "rel", "tools", "xexp", "xexp"))
PATTERNS = os.environ.get("PATTERNS", "")
OPTIONS = os.environ.get("OPTIONS", "").split()
WRONG = 1e-4

TYPES = {"float32": (1, "<f4"), "int64": (7, "<i8"), "int32": (6, "<i4"), "bool": (9, "u1"),
         "float16": (10, "<f2"), "float64": (11, "<f8")}
NUMPY_OF_ONNX = {number: numpy_type for number, numpy_type in TYPES.values()}
ATTENTION = ("MultiHeadAttention", "Attention", "GroupQueryAttention", "PackedAttention", "DecoderMaskedMultiHeadAttention")


def spec_of(model):
    directory, base = os.path.split(model)
    path = os.path.join(directory, base.split(".")[0] + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        spec = json.load(f)
    spec["dir"] = directory
    return spec


def histogram(path):
    model = onnx.load(path, load_external_data=False)
    return collections.Counter(n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}:{n.op_type}"
                               for n in model.graph.node)


def count(hist, names):
    return {k.split(":")[-1]: v for k, v in hist.items() if k.split(":")[-1] in names}


def max_difference(spec, out_dir):
    """Largest |ORT - torch| over all outputs, or a word saying why there is none."""
    listing = os.path.join(out_dir, "outputs.json")
    if not os.path.exists(listing):
        return "failed"
    with open(listing) as f:
        produced = {entry["name"]: entry for entry in json.load(f)}
    worst = 0.0
    for expected in spec["outputs"]:
        entry = produced.get(expected["name"])
        if entry is None:
            return "missing"
        got = numpy.fromfile(os.path.join(out_dir, entry["path"]), NUMPY_OF_ONNX[entry["type"]])
        want = numpy.fromfile(os.path.join(spec["dir"], expected["file"]), TYPES[expected["dtype"]][1])
        if got.size != want.size or list(entry["dims"]) != list(expected["shape"]):
            return "shape"
        difference = numpy.abs(got.astype(numpy.float64) - want.astype(numpy.float64))
        if numpy.isnan(difference).any():
            return "nan"
        worst = max(worst, float(difference.max()) if difference.size else 0.0)
    return worst


def run_batch(jobs, work, level):
    path = os.path.join(work, f"jobs.{level}.json")
    with open(path, "w") as f:
        json.dump(jobs, f)
    result = subprocess.run(["node", RUNNER, "batch", path, "--level", level, "--threads", "1"],
                            capture_output=True, text=True)
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return {line["job"]: line.get("error") for line in lines}


def main(models):
    if not os.access(XEXP, os.X_OK):
        sys.exit(f"error: no xexp binary at {XEXP} (set XEXP)")
    if not models:
        models = sorted(glob.glob(os.path.join(HERE, "tests", "data", "models", "*.onnx")) +
                        glob.glob(os.path.join(SHARED, "models", "*.onnx")))
    work = tempfile.mkdtemp(prefix="fixtures_report.")
    rows, plain, extended = [], [], []
    for k, model in enumerate(models):
        spec = spec_of(model)
        if spec is None:
            print(f"skipped {model}: no NAME.json beside it", file=sys.stderr)
            continue
        name = os.path.basename(model)[:-len(".onnx")]
        inputs = os.path.join(work, f"{k}.inputs.json")
        with open(inputs, "w") as f:
            json.dump([{"name": i["name"], "type": TYPES[i["dtype"]][0], "dims": i["shape"],
                        "path": os.path.abspath(os.path.join(spec["dir"], i["file"]))} for i in spec["inputs"]], f)
        optimized = os.path.join(work, f"{k}.xexp.onnx")
        command = [XEXP, "optimize", model, "-o", optimized] + (["--patterns", PATTERNS] if PATTERNS else []) + OPTIONS
        done = subprocess.run(command, capture_output=True, text=True)
        row = {"name": name, "spec": spec, "model": model, "optimized": optimized if done.returncode == 0 else None,
               "error": (done.stderr.strip().splitlines() or ["?"])[-1] if done.returncode else "",
               "original_out": os.path.join(work, f"{k}.original"), "xexp_out": os.path.join(work, f"{k}.xexp"),
               "ort_extended": os.path.join(work, f"{k}.ort_extended.onnx")}
        plain.append({"model": model, "inputs": inputs, "out": row["original_out"]})
        if row["optimized"]:
            plain.append({"model": optimized, "inputs": inputs, "out": row["xexp_out"]})
        extended.append({"model": model, "inputs": inputs, "out": os.path.join(work, f"{k}.extended"),
                         "saveOptimized": row["ort_extended"]})
        rows.append(row)
    errors = run_batch(plain, work, "disabled")
    run_batch(extended, work, "extended")
    for job, error in errors.items():
        if error:
            print(f"ORT failed on {plain[job]['model']}: {error}", file=sys.stderr)

    def figure(value):
        return f"{value:.2e}" if isinstance(value, float) else value

    print(f"{'model':34} {'nodes':>5} {'xexp':>5} {'ort_ext':>7}  {'attention':24} {'rotary':6} "
          f"{'diff_orig':>9} {'diff_xexp':>9}")
    details = []
    for row in rows:
        before = sum(histogram(row["model"]).values())
        ort_ext = sum(histogram(row["ort_extended"]).values()) if os.path.exists(row["ort_extended"]) else "-"
        original = max_difference(row["spec"], row["original_out"])
        if row["optimized"] is None:
            print(f"{row['name']:34} {before:5} xexp failed: {row['error']}")
            continue
        after = histogram(row["optimized"])
        attention = ",".join(f"{op}x{n}" for op, n in sorted(count(after, ATTENTION).items())) or "no"
        rotary = count(after, ("RotaryEmbedding",)).get("RotaryEmbedding", "no")
        ours = max_difference(row["spec"], row["xexp_out"])
        wrong = "  ORT failed" if ours == "failed" else "  WRONG" if not isinstance(ours, float) or ours > WRONG else ""
        print(f"{row['name']:34} {before:5} {sum(after.values()):5} {ort_ext:>7}  {attention:24} {rotary!s:6} "
              f"{figure(original):>9} {figure(ours):>9}{wrong}")
        details.append(f"{row['name']}: " + " ".join(f"{op}:{n}" for op, n in after.most_common()))
    print()
    print("\n".join(details))
    if os.environ.get("KEEP"):
        print(f"\n(work files in {work})")
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main(sys.argv[1:])
