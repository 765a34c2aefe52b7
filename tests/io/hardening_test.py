#!/usr/bin/python3
"""Regressions of issue 13's file, path, signal and message classes, through the CLI.

Usage: hardening_test.py SURGEON. One case per class found by the adversarial
test: each builds the minimal file, runs the command and checks the exact exit
code, the message, and that nothing was lost or left behind.

- hangs: every reader given a FIFO (model, external data, -i, -c, map=, the
  atc side files, compare's -m, the --check readers) fails at once; side
  files are capped; a YAML pipeline nested 100,000 deep is refused from the
  event stream; 100,000-line keep_dtype and switch files are read (the old
  reader took minutes under ASan; the timeouts are hang guards, speed is
  tools/bench/bench_readers.sh's);
- data loss: no output replaces a file the command reads (convert/optimize
  over external data or with the data file named like the model, atc with an
  input named like its outputs, fusion-switch over its map); result folders
  holding anything an earlier run did not write are refused;
- wrong results: non-finite --range, a .npy descr with a NUL, two external
  data locations (the last wins: python onnx is the oracle), rename of
  names reused in then/else branches (onnx.checker is the oracle), names
  that are not UTF-8 in inspect --json, run's manifest.json and the mock
  map (json.loads is the oracle);
- signals: SIGINT/SIGTERM remove the temporaries, leftovers of a killed
  process are removed on the next run;
- messages: 70 nested subgraphs keep the cause; a full disk (RLIMIT_FSIZE)
  names the file and errno.
"""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FAILURES = []
SURGEON = None
HERE = os.path.dirname(os.path.abspath(__file__))


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(*args, timeout=60, **kw):
    try:
        return subprocess.run([SURGEON] + [str(a) for a in args], capture_output=True, text=True,
                              errors="replace", timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, "timeout", "", "timed out after %ds" % timeout)


def expect(what, p, code, *words):
    err = p.stderr.strip()
    ok = p.returncode == code and all(w in err for w in words)
    check(ok, "%s: exit %s%s" % (what, p.returncode, "" if ok else " | " + err[-600:]))


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def vi(name, shape=(2,), dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def relu_model(path):
    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y")]), path)


def external_model(folder, name="m.onnx", data="m.data", locations=None, values=None):
    """Add(x, w) with w in external data; `locations` lists the location entries."""
    w = np.arange(4, dtype=np.float32) if values is None else values
    with open(os.path.join(folder, data), "wb") as f:
        f.write(w.tobytes())
    t = numpy_helper.from_array(w, "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for loc in locations or [data]:
        t.external_data.add(key="location", value=loc)
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [vi("x", (4,))],
               [vi("y", (4,))], [t]), os.path.join(folder, name))


def digest(path):
    return open(path, "rb").read()


def hangs(tmp):
    d = os.path.join(tmp, "fifo")
    os.mkdir(d)
    fifo = os.path.join(d, "f")
    os.mkfifo(fifo)
    m = os.path.join(d, "m.onnx")
    relu_model(m)
    x = os.path.join(d, "x.npy")
    np.save(x, np.ones(2, np.float32))
    ext = os.path.join(d, "ext")
    os.mkdir(ext)
    external_model(ext)
    os.remove(os.path.join(ext, "m.data"))
    os.mkfifo(os.path.join(ext, "m.data"))
    out = os.path.join(d, "out")
    fifo_msg = "not a regular file (a FIFO)"
    cases = [
        ("model", ["inspect", fifo], 1),
        ("external data", ["inspect", os.path.join(ext, "m.onnx")], 1),
        ("-i input", ["run", m, "-i", fifo + ".npy", "-o", out], 1),
        ("-c pipeline", ["optimize", m, "-o", out + ".onnx", "-c", fifo], 2),
        ("rename map=", ["optimize", m, "-o", out + ".onnx", "--pass", "rename:map=" + fifo], 1),
        ("atc --fusion FILE", ["atc", m, "-o", out, "--soc", "Ascend910B1", "--mock",
                               "--fusion", fifo], 1),
        ("atc --keep-dtype FILE", ["atc", m, "-o", out, "--soc", "Ascend910B1", "--mock",
                                   "--keep-dtype", fifo], 1),
        ("atc --customize-dtypes FILE", ["atc", m, "-o", out, "--soc", "Ascend910B1", "--mock",
                                         "--customize-dtypes", fifo], 1),
        ("keep-dtype --check", ["keep-dtype", "--check", fifo], 1),
        ("fusion-switch --check", ["fusion-switch", "--check", fifo], 1),
        ("fusion-switch --from-map", ["fusion-switch", "-o", out + ".cfg", "--from-map", fifo,
                                      "--nodes", "relu"], 1),
    ]
    os.symlink(fifo, fifo + ".npy")
    for what, args, code in cases:
        expect("FIFO as %s refused at once" % what, run(*args, timeout=20), code, fifo_msg)
    expect("rename:map=/dev/zero refused", run("optimize", m, "-o", out + ".onnx", "--pass",
                                               "rename:map=/dev/zero"), 1,
           "/dev/zero: not a regular file (a character device)")
    big = os.path.join(d, "big.map")
    with open(big, "wb") as f:
        f.truncate((64 << 20) + 1)  # sparse
    expect("a 64 MB + 1 rename map is refused", run("optimize", m, "-o", out + ".onnx",
                                                    "--pass", "rename:map=" + big), 1,
           "67108865 bytes, more than the 67108864 allowed")
    deep = os.path.join(d, "deep.yaml")
    with open(deep, "w") as f:
        f.write("passes: " + "[" * 100000 + "]" * 100000 + "\n")
    expect("YAML nested 100,000 deep refused from the events", run(
        "optimize", m, "-o", out + ".onnx", "-c", deep, timeout=30), 2,
        "deep.yaml:1:", "nested deeper than 64 levels")
    keep = os.path.join(d, "keep.cfg")
    with open(keep, "w") as f:
        f.writelines("Node_%d\n" % i for i in range(100000))
    p = run("keep-dtype", "--check", keep, timeout=120)
    check(p.returncode == 0 and "valid keep_dtype file, 100000 entries" in p.stdout,
          "a 100,000-line keep_dtype file is read (exit %s)" % p.returncode)
    sw = os.path.join(d, "sw.cfg")
    with open(sw, "w") as f:
        f.writelines("Pass%d:off\n" % i for i in range(100000))
    f = open(sw, "a")
    f.write("Pass7:on\n")
    f.close()
    expect("a 100,000-line switch file is read, its duplicate found",
           run("fusion-switch", "--check", sw, timeout=120), 1,
           "sw.cfg:100001:1: 'Pass7' given twice (first on line 8)")


def data_loss(tmp):
    d = os.path.join(tmp, "loss")
    os.mkdir(d)
    external_model(d)
    m, data = os.path.join(d, "m.onnx"), os.path.join(d, "m.data")
    before = digest(m), digest(data)

    def intact(what):
        check((digest(m), digest(data)) == before, "%s: the model and its data are intact" % what)

    expect("convert M.onnx -o M.data refused", run("convert", m, "-o", data), 1,
           "refusing to write the model over its own external data file 'm.data'")
    intact("convert -o M.data")
    expect("optimize M.onnx -o M.data refused",
           run("optimize", m, "-o", data, "--pass", "remove-identity"), 1,
           "refusing to write the model over its own external data file 'm.data'")
    intact("optimize -o M.data")
    os.mkdir(os.path.join(d, "out"))
    expect("convert -o out/e.onnx --external-data e.onnx refused",
           run("convert", m, "-o", os.path.join(d, "out", "e.onnx"), "--external-data", "e.onnx"),
           1, "the external data file would be the model file itself")
    check(os.listdir(os.path.join(d, "out")) == [], "nothing written to out/")
    expect("convert with --external-data naming the input's data refused",
           run("convert", m, "-o", os.path.join(d, "b.onnx"), "--external-data", "m.data",
               "--size-threshold", "1"), 1, "the input model's external data")
    intact("--external-data m.data")
    expect("convert onto a hard link of the input refused",
           (os.link(m, os.path.join(d, "hard.onnx")),
            run("convert", m, "-o", os.path.join(d, "hard.onnx")))[1], 1,
           "refusing to overwrite the input model")
    intact("hard link")
    # atc: an input named like one of its outputs.
    a = os.path.join(d, "atc")
    os.mkdir(a)
    for name, extra in [("P.json", []), ("P.keep_dtype.cfg", ["--keep", "Relu"]),
                        ("P.fusion_switch.cfg", ["--fusion", "off"])]:
        src = os.path.join(a, name)
        relu_model(src)
        keep = digest(src)
        expect("atc with the model named %s refused" % name,
               run("atc", src, "-o", os.path.join(a, "P"), "--soc", "Ascend910B1", "--mock",
                   *extra), 1, "refusing to write '%s'" % src, "this command reads it")
        check(digest(src) == keep and sorted(os.listdir(a)) == [name],
              "atc left %s intact and wrote nothing (%s)" % (name, os.listdir(a)))
        os.remove(src)
    relu_model(os.path.join(a, "m.onnx"))
    kd = os.path.join(a, "P.fusion_switch.cfg")
    with open(kd, "w") as f:
        f.write("relu\n")
    expect("atc --keep-dtype P.fusion_switch.cfg --fusion off refused",
           run("atc", os.path.join(a, "m.onnx"), "-o", os.path.join(a, "P"), "--soc",
               "Ascend910B1", "--mock", "--keep-dtype", kd, "--fusion", "off"), 1,
           "refusing to write '%s'" % kd)
    check(open(kd).read() == "relu\n" and sorted(os.listdir(a)) == ["P.fusion_switch.cfg",
                                                                     "m.onnx"],
          "the keep_dtype file is intact, nothing written (%s)" % os.listdir(a))
    seed = os.path.join(os.path.dirname(os.path.dirname(HERE)), "models", "exp_overflow.onnx")
    p = run("atc", seed, "-o", os.path.join(a, "Q"), "--soc", "Ascend910B1", "--mock")
    mp = os.path.join(a, "Q.json")
    keep = digest(mp)
    expect("fusion-switch -o MAP --from-map MAP refused",
           run("fusion-switch", "-o", mp, "--from-map", mp, "--nodes", "Add_9"), 1,
           "refusing to write '%s'" % mp)
    check(digest(mp) == keep, "the map is intact")
    # Result folders: replaced only when they hold nothing but an earlier result.
    rm = os.path.join(d, "r.onnx")
    relu_model(rm)
    for cmd, marker, extra in [("run", "manifest.json", []),
                               ("compare", "run.json", ["--target", "mock", "--soc",
                                                        "Ascend910B1"])]:
        proj = os.path.join(d, "proj_" + cmd)
        os.makedirs(os.path.join(proj, "src"))
        with open(os.path.join(proj, marker), "w") as f:
            f.write("{}")
        with open(os.path.join(proj, "src", "main.c"), "w") as f:
            f.write("int main;\n")
        args = [cmd, rm] + extra + ["--random", "1", "-o", proj]
        expect("%s -o a project folder holding %s refused" % (cmd, marker), run(*args), 1,
               "is not an earlier surgeon %s folder" % cmd)
        check(os.path.exists(os.path.join(proj, "src", "main.c")), "%s: src/ kept" % cmd)
        res = os.path.join(d, "res_" + cmd)
        args[-1] = res
        expect("%s into a new folder" % cmd, run(*args), 0)
        expect("%s again into its own result (replaced)" % cmd, run(*args), 0)
        with open(os.path.join(res, "notes.txt"), "w") as f:
            f.write("mine\n")
        expect("%s into its result after the user added a file: refused" % cmd, run(*args), 1,
               "holds 'notes.txt', which no earlier surgeon %s wrote" % cmd)
        check(os.path.exists(os.path.join(res, "notes.txt")), "%s: notes.txt kept" % cmd)
        other = "compare" if cmd == "run" else "run"
        os.remove(os.path.join(res, "notes.txt"))
        oargs = [other, rm] + (["--target", "mock", "--soc", "Ascend910B1"]
                               if other == "compare" else []) + ["--random", "1", "-o", res]
        expect("%s into a %s result refused" % (other, cmd), run(*oargs), 1,
               "is the result of surgeon %s, not of surgeon %s" % (cmd, other))


def wrong_results(tmp):
    d = os.path.join(tmp, "wrong")
    os.mkdir(d)
    m = os.path.join(d, "m.onnx")
    relu_model(m)
    out = os.path.join(d, "out")
    for rng in ["-inf,inf", "nan,1", "0,inf", "-1e308,1e308"]:
        expect("--range %s refused" % rng, run("run", m, "--random", "1", "--range", rng,
                                               "-o", out), 2,
               "bad --range '%s' (want LO,HI: finite numbers, LO < HI)" % rng)
    h = os.path.join(d, "h.onnx")
    save(model([helper.make_node("Relu", ["x"], ["y"], name="r")],
               [vi("x", (2,), TensorProto.FLOAT16)], [vi("y", (2,), TensorProto.FLOAT16)]), h)
    expect("--range past float16 refused", run("run", h, "--random", "1", "--range", "0,1e6",
                                               "-o", out), 1,
           "input 'x': --range 0,1e+06 does not fit float16")
    i8 = os.path.join(d, "i8.onnx")
    save(model([helper.make_node("Identity", ["x"], ["y"], name="r")],
               [vi("x", (2,), TensorProto.INT8)], [vi("y", (2,), TensorProto.INT8)]), i8)
    expect("--range past int8 refused", run("run", i8, "--random", "1", "--range", "0,1000",
                                            "-o", out), 1, "does not fit int8")
    bad = os.path.join(d, "nul.npy")
    np.save(bad, np.ones(2, np.float32))
    raw = open(bad, "rb").read()
    raw = raw.replace(b"'descr': '<f4',", b"'descr': '<f4\x00j',")
    with open(bad, "wb") as f:
        f.write(raw)
    expect("npy descr '<f4\\0j' refused", run("run", m, "-i", bad, "-o", out), 1,
           "nul.npy: malformed .npy header")
    # Two location entries: the last wins, as python onnx reads it.
    e = os.path.join(d, "ext")
    os.mkdir(e)
    with open(os.path.join(e, "first.bin"), "wb") as f:
        f.write(np.full(4, 100, np.float32).tobytes())
    external_model(e, data="last.bin", locations=["first.bin", "last.bin"],
                   values=np.array([1, 2, 3, 4], np.float32))
    ref = onnx.load(os.path.join(e, "m.onnx"))
    w = numpy_helper.to_array(ref.graph.initializer[0])
    x = os.path.join(d, "x4.npy")
    np.save(x, np.ones(4, np.float32))
    p = run("run", os.path.join(e, "m.onnx"), "-i", x, "-o", os.path.join(e, "res"))
    got = None
    if p.returncode == 0:
        man = json.load(open(os.path.join(e, "res", "manifest.json")))
        got = np.load(os.path.join(e, "res", man["outputs"][0]["file"]))
    check(got is not None and np.array_equal(got, 1 + w) and w[0] == 1,
          "two locations: the last wins, as in python onnx (%s vs 1 + %s)" % (got, w))
    # rename with names reused in then and else (per scope).
    def branch(tag, op):
        return helper.make_graph([helper.make_node(op, ["x"], ["t"], name="n_" + tag),
                                  helper.make_node("Identity", ["t"], ["o_" + tag],
                                                   name="id_" + tag)],
                                 tag, [], [vi("o_" + tag)])
    s = os.path.join(d, "scopes.onnx")
    sm = model([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=branch("then", "Relu"),
                                 else_branch=branch("else", "Neg"))],
               [vi("c", (), TensorProto.BOOL), vi("x")], [vi("y")])
    onnx.checker.check_model(sm)
    save(sm, s)
    so = os.path.join(d, "scopes_q.onnx")
    expect("rename:prefix=q_,target=values with then/else reusing names",
           run("optimize", s, "-o", so, "--pass", "rename:prefix=q_,target=values"), 0)
    if os.path.exists(so):
        q = onnx.load(so)
        onnx.checker.check_model(q)
        outs = sorted(o for a in q.graph.node[0].attribute for n in a.g.node for o in n.output)
        check(outs == ["q_o_else", "q_o_then", "q_t", "q_t"],
              "both branches renamed in their own scope: %s" % outs)
    expect("rename into an outer name is still refused",
           run("optimize", s, "-o", so, "--pass", "rename:target=values,map=" + write_text(
               d, "m.map", "t x\n")), 1, "cannot rename value 't' to 'x': name 'x' is already used")
    # Names that are not UTF-8.
    u = os.path.join(d, "utf.onnx")
    um = model([helper.make_node("Relu", ["x"], ["y"], name="N\x01\x02q")], [vi("x")], [vi("y")])
    raw = um.SerializeToString().replace(b"N\x01\x02q", b"N\xff\xfeq")
    with open(u, "wb") as f:
        f.write(raw)
    p = run("inspect", u, "--json", "--nodes")
    try:
        doc = json.loads(p.stdout)
        names = json.dumps(doc)
        ok = p.returncode == 0 and "N\\udcff\\udcfeq" in names
    except ValueError as ex:
        ok = False
        names = str(ex)
    check(ok, "inspect --json of a name that is not UTF-8 is valid JSON, the bytes kept (%s)"
          % names[-200:])
    res = os.path.join(d, "ures")
    p = run("run", u, "--random", "1", "--dump", "all", "-o", res)
    try:
        man = json.loads(open(os.path.join(res, "manifest.json"), "rb").read().decode())
        node = [t["node"] for t in man["tensors"]]
        ok = p.returncode == 0 and "N\udcff\udcfeq" in node
    except (ValueError, OSError, KeyError) as ex:
        ok, node = False, str(ex)
    check(ok, "run's manifest.json of that name is valid JSON (%s)" % node)
    p = run("atc", u, "-o", os.path.join(d, "U"), "--soc", "Ascend910B1", "--mock")
    try:
        text = open(os.path.join(d, "U.json"), "rb").read().decode()
        ok = p.returncode == 0 and "N\udcff\udcfeq" in json.dumps(json.loads(text),
                                                                   ensure_ascii=False)
    except (ValueError, OSError) as ex:
        ok = False
    check(ok, "the mock map of that name is valid JSON")
    rc = run("compare", u, "--target", "mock", "--soc", "Ascend910B1", "--random", "1", "-o",
             os.path.join(d, "ucmp"))
    check(rc.returncode in (0, 3), "compare reads that map back (exit %s %s)"
          % (rc.returncode, rc.stderr.strip()[-300:]))


def write_text(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def slow_model(path):
    """MatMuls on 1024x1024 matrices: a run that takes seconds with --dump all."""
    w = numpy_helper.from_array(np.eye(1024, dtype=np.float32) * 0.5, "w")
    nodes, prev = [], "x"
    for i in range(24):
        nodes.append(helper.make_node("MatMul", [prev, "w"], ["h%d" % i], name="mm%d" % i))
        prev = "h%d" % i
    save(model(nodes, [vi("x", (1024, 1024))], [vi(prev, (1024, 1024))], [w]), path)


def wait_for(pred, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def signals(tmp):
    d = os.path.join(tmp, "sig")
    os.mkdir(d)
    m = os.path.join(d, "slow.onnx")
    slow_model(m)
    for sig in (signal.SIGINT, signal.SIGTERM):
        out = os.path.join(d, "out")
        p = subprocess.Popen([SURGEON, "run", m, "--random", "1", "--dump", "all", "-o", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        temps = lambda: [f for f in os.listdir(d) if f.startswith(".out.tmp.")]
        seen = wait_for(lambda: temps() and os.listdir(os.path.join(d, temps()[0])), 60)
        p.send_signal(sig)
        p.wait(60)
        check(seen and p.returncode == -sig and not temps() and not os.path.exists(out),
              "run --dump all stopped by %s: status %s, temporaries left: %s"
              % (signal.Signals(sig).name, p.returncode, temps()))
    # What a killed process leaves (SIGKILL cannot be caught) goes on the next run.
    dead = subprocess.Popen(["true"])
    dead.wait()
    pid = dead.pid
    small = os.path.join(d, "m.onnx")
    relu_model(small)
    left = ["o.onnx.tmp.%d.abc123" % pid, ".res.tmp.%d.abc123/" % pid]
    os.mkdir(os.path.join(d, ".res.tmp.%d.abc123" % pid))
    with open(os.path.join(d, ".res.tmp.%d.abc123" % pid, "x.npy"), "w") as f:
        f.write("partial")
    with open(os.path.join(d, "o.onnx.tmp.%d.abc123" % pid), "w") as f:
        f.write("partial")
    live = "o.onnx.tmp.%d.abc123" % os.getpid()  # a live process's: kept
    with open(os.path.join(d, live), "w") as f:
        f.write("in use")
    expect("convert after a killed convert", run("convert", small, "-o", os.path.join(d, "o.onnx")),
           0)
    expect("run after a killed run", run("run", small, "--random", "1", "-o",
                                         os.path.join(d, "res")), 0)
    names = os.listdir(d)
    check(not any(n.rstrip("/") in names for n in left) and live in names,
          "stale temporaries of the dead process removed, the live one's kept: %s" % names)
    # An earlier result moved aside by a killed commit comes back.
    res = os.path.join(d, "res")
    aside = os.path.join(d, "res.old.%d.abc123" % pid)
    os.rename(res, aside)
    expect("run after a commit killed halfway", run("run", small, "--random", "2", "-o",
                                                    os.path.join(d, "res2")), 0)
    p = run("run", small, "--random", "1", "-o", res)
    check(p.returncode == 0 and not os.path.exists(aside),
          "the earlier result moved aside is restored, then replaced (%s)" % p.stderr.strip())


def messages(tmp):
    d = os.path.join(tmp, "msg")
    os.mkdir(d)

    def leaf(name):
        return helper.make_graph([helper.make_node("Identity", ["x"], [name], name="id_" + name)],
                                 "leaf", [], [vi(name, (1,))])

    def nest(depth):
        if depth == 0:
            return helper.make_graph([helper.make_node("Relu", ["nowhere"], ["o0"], name="bad")],
                                     "leaf", [], [vi("o0", (1,))])
        n = helper.make_node("If", ["c"], ["o%d" % depth], name="if%d" % depth,
                             then_branch=nest(depth - 1), else_branch=leaf("e%d" % depth))
        return helper.make_graph([n], "g%d" % depth, [], [vi("o%d" % depth, (1,))])

    deep = os.path.join(d, "deep.onnx")
    save(model(list(nest(70).node), [vi("c", (), TensorProto.BOOL), vi("x", (1,))],
               [vi("o70", (1,))]), deep)
    p = run("inspect", deep)
    expect("70 nested subgraphs: the cause kept, the path elided", p, 1,
           "deep.onnx: in subgraph 'then_branch' of node 'if70'", ": ...: ",
           "subgraphs nested deeper than 64 levels")
    check(len(p.stderr) < 1000, "the message is short (%d bytes)" % len(p.stderr))
    m = os.path.join(d, "m.onnx")
    relu_model(m)

    def small_disk():
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    # SIGXFSZ ignored in the child (inherited), so write() fails with EFBIG.
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        p = run("atc", m, "-o", os.path.join(d, "P"), "--soc", "Ascend910B1", "--mock",
                "--keep", "Relu", "--fusion", "off", preexec_fn=small_disk,
                restore_signals=False)
    finally:
        signal.signal(signal.SIGXFSZ, old)
    expect("a full disk while atc writes its .json names the file and errno", p, 1,
           "writing '%s': File too large" % os.path.join(d, "P.json"))
    check(sorted(os.listdir(d)) == ["deep.onnx", "m.onnx"],
          "nothing left by the failed atc, its keep_dtype and switch files removed: %s"
          % os.listdir(d))


def main():
    global SURGEON
    SURGEON = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="sg-harden-")
    try:
        for part in (hangs, data_loss, wrong_results, signals, messages):
            print("== %s" % part.__name__)
            part(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
