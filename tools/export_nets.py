#!/usr/bin/python3
"""Export real networks to ONNX with torch, in the ONNX backend-test layout.

    tools/export_nets.py OUTDIR [--nets NAME,...] [--opsets 13,17] [--list]

For every network and opset it writes OUTDIR/<net>_op<opset>/ with
model.onnx and test_data_set_0/input_0.pb, output_0.pb: a seeded input and
torch's own output for it (the expected data). Needs Debian's python3-torch
and python3-torchvision (tools/export_nets.sh installs them); nothing is
downloaded: every weight is torch's random initialisation under a fixed
seed (one per network, from its name, so a network does not depend on which
others are exported).

BatchNorm statistics of a fresh network are mean 0 / variance 1, which
leaves deep networks with outputs near zero or blowing up. They are
recalibrated on a few seeded batches first: the BatchNorm layers alone run
in training mode with momentum=None (a plain average over the batches),
then the network goes back to eval mode. ViT's classifier head starts at
zero in torchvision; it gets a seeded normal initialisation instead.

A folder holds `source.sha256`, the digest of this script and the torch
version that made it; folders whose digest matches are kept, others are
made again (each one is written to a temporary folder and renamed).
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import warnings
import zlib

OPSETS = (13, 17)

# name: (input kind, input shape)
NETS = {
    "resnet18": ("image", (1, 3, 224, 224)),
    "resnet50": ("image", (1, 3, 224, 224)),
    "mobilenet_v2": ("image", (1, 3, 224, 224)),
    "mobilenet_v3_small": ("image", (1, 3, 224, 224)),
    "efficientnet_b0": ("image", (1, 3, 224, 224)),
    "squeezenet1_0": ("image", (1, 3, 224, 224)),
    "shufflenet_v2_x1_0": ("image", (1, 3, 224, 224)),
    "densenet121": ("image", (1, 3, 224, 224)),
    "vit_b_16": ("image", (1, 3, 224, 224)),
    "transformer_encoder": ("sequence", (32, 1, 256)),  # [seq, batch, d_model]
    "lstm_tagger": ("tokens", (1, 40)),  # [batch, seq] token ids
}

VOCAB, TAGS = 1000, 17


def digest(torch_version):
    h = hashlib.sha256()
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    h.update(torch_version.encode())
    return h.hexdigest()


def seed_of(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def build(name, torch, nn, tv):
    """The network, in eval mode, with recalibrated BatchNorm statistics."""
    torch.manual_seed(seed_of(name))
    if name == "transformer_encoder":
        layer = nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=512, dropout=0.1,
                                           activation="gelu")
        return nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(256)).eval()
    if name == "lstm_tagger":

        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(VOCAB, 64)
                self.lstm = nn.LSTM(64, 96, num_layers=2, bidirectional=True, batch_first=True)
                self.out = nn.Linear(2 * 96, TAGS)

            def forward(self, tokens):
                h, _ = self.lstm(self.emb(tokens))
                return self.out(h)  # tag logits

        return Tagger().eval()
    net = getattr(tv.models, name)(weights=None)
    if name == "vit_b_16":
        nn.init.normal_(net.heads.head.weight, std=0.02)
        nn.init.normal_(net.heads.head.bias, std=0.02)
    bns = [m for m in net.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    net.eval()
    if bns:
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None
            bn.train()
        g = torch.Generator().manual_seed(seed_of(name) + 1)
        with torch.no_grad():
            for _ in range(3):
                net(torch.randn(4, *NETS[name][1][1:], generator=g))
        for bn in bns:
            bn.momentum = 0.1
        net.eval()
    return net


def make_input(name, torch):
    kind, shape = NETS[name]
    g = torch.Generator().manual_seed(seed_of(name) + 2)
    if kind == "tokens":
        return torch.randint(0, VOCAB, shape, generator=g, dtype=torch.int64)
    return torch.randn(*shape, generator=g)


def export_one(name, opset, folder, torch, nn, tv, onnx, numpy_helper):
    net = build(name, torch, nn, tv)
    x = make_input(name, torch)
    with torch.no_grad():
        y = net(x)
    parent = os.path.dirname(folder) or "."
    tmp = tempfile.mkdtemp(prefix=".tmp-" + os.path.basename(folder), dir=parent)
    try:
        path = os.path.join(tmp, "model.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(net, (x,), path, opset_version=opset, input_names=["input"],
                              output_names=["output"], do_constant_folding=True)
        model = onnx.load(path)
        onnx.checker.check_model(model)
        got = {o.domain or "": o.version for o in model.opset_import}
        if got.get("") != opset:
            raise RuntimeError("%s: exported at opset %s, asked for %d" % (name, got.get(""), opset))
        data = os.path.join(tmp, "test_data_set_0")
        os.mkdir(data)
        for fname, arr, vname in (("input_0.pb", x, model.graph.input[0].name),
                                  ("output_0.pb", y, model.graph.output[0].name)):
            t = numpy_helper.from_array(arr.detach().numpy(), vname)
            with open(os.path.join(data, fname), "wb") as f:
                f.write(t.SerializeToString())
        yv = y.detach().double()
        return tmp, "output %s std %.3g max|y| %.3g" % (tuple(y.shape), float(yv.std()),
                                                         float(yv.abs().max()))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--nets", default=",".join(NETS), help="comma-separated names (default all)")
    ap.add_argument("--opsets", default=",".join(map(str, OPSETS)))
    ap.add_argument("--list", action="store_true", help="print the folder names and exit")
    args = ap.parse_args()
    names = [n for n in args.nets.split(",") if n]
    opsets = [int(o) for o in args.opsets.split(",") if o]
    for n in names:
        if n not in NETS:
            sys.exit("unknown network %r (known: %s)" % (n, ", ".join(NETS)))
    if args.list:
        for n in names:
            for o in opsets:
                print("%s_op%d" % (n, o))
        return 0
    try:
        import torch
        import torch.nn as nn
        import torchvision as tv
    except ImportError as e:
        sys.exit("export_nets.py needs python3-torch and python3-torchvision (%s); "
                 "tools/export_nets.sh installs them" % e)
    import onnx
    from onnx import numpy_helper

    max_opset = torch.onnx._constants.ONNX_MAX_OPSET
    for o in opsets:
        if o > max_opset:
            sys.exit("torch %s exports up to opset %d, not %d" % (torch.__version__, max_opset, o))
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    os.makedirs(args.outdir, exist_ok=True)
    stamp = digest(torch.__version__)
    for n in names:
        for o in opsets:
            folder = os.path.join(args.outdir, "%s_op%d" % (n, o))
            sfile = os.path.join(folder, "source.sha256")
            if os.path.exists(sfile) and open(sfile).read().strip() == stamp:
                print("kept     %s" % os.path.basename(folder), flush=True)
                continue
            tmp, info = export_one(n, o, folder, torch, nn, tv, onnx, numpy_helper)
            with open(os.path.join(tmp, "source.sha256"), "w") as f:
                f.write(stamp + "\n")
            if os.path.exists(folder):
                shutil.rmtree(folder)
            os.rename(tmp, folder)
            print("exported %s: %s" % (os.path.basename(folder), info), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
