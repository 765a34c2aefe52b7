#!/usr/bin/python3
"""Independent numpy reference for the comparison metrics (FORMATS.md).

Written straight from the definitions, element-wise numpy, float64
arithmetic on float32-converted data; the C engine must agree with it.
tests/check_compare.c imports it through generated scripts.
"""
import numpy as np

EPS = 2.220446049250313e-16

NAMES = ["cosine", "max_abs", "accum_rel", "red", "kl", "mean_abs", "rmse",
         "max_rel", "mean_rel", "target_mean", "target_std", "golden_mean",
         "golden_std"]


def _kl_side(v):
    mn, mx = v.min(), v.max()
    if mx == mn:
        p = np.ones_like(v)
    else:
        p = (v - mn) / (mx - mn)
    p = np.maximum(p, EPS)
    return p / p.sum()


def metrics(target, golden):
    """The FORMATS.md metrics; x is the target, y the golden side."""
    is_bool = target.dtype == np.bool_ or golden.dtype == np.bool_
    x = np.asarray(target).astype(np.float32).astype(np.float64).ravel()
    y = np.asarray(golden).astype(np.float32).astype(np.float64).ravel()
    assert x.size == y.size
    out = dict.fromkeys(NAMES, float("nan"))
    if x.size == 0:
        return out
    with np.errstate(all="ignore"):
        nx = np.sqrt((x * x).sum())
        ny = np.sqrt((y * y).sum())
        if nx <= EPS and ny <= EPS:
            cos = 1.0
        elif nx <= EPS or ny <= EPS:
            cos = float("nan")
        else:
            cos = (x * y).sum() / (nx * ny)
            if cos > 1.0:
                cos = 1.0
        d = x - y
        out["cosine"] = float(cos)
        out["red"] = 0.0 if ny <= EPS else float(np.sqrt((d * d).sum() / (y * y).sum()))
        if is_bool:
            return out
        r = np.where(np.abs(y) > EPS, np.abs(x / y - 1.0), 0.0)
        out["max_abs"] = float(np.abs(d).max())
        out["accum_rel"] = float(r.sum())
        out["max_rel"] = float(r.max())
        out["mean_rel"] = float(r.mean())
        out["mean_abs"] = float(np.abs(d).mean())
        out["rmse"] = float(np.sqrt((d * d).mean()))
        out["target_mean"] = float(x.mean())
        out["golden_mean"] = float(y.mean())
        out["target_std"] = float(x.std())
        out["golden_std"] = float(y.std())
        P = _kl_side(x)
        Q = _kl_side(y)
        kl = float((P * np.log(P / Q)).sum())
        out["kl"] = 0.0 if abs(kl) < EPS else kl
    return out


def overflow(target, golden):
    """Elements non-finite on the target side and finite on the golden side."""
    x = np.asarray(target).astype(np.float32).ravel()
    y = np.asarray(golden).astype(np.float32).ravel()
    return int((~np.isfinite(x) & np.isfinite(y)).sum())


def write_ref(path, target, golden):
    """One line per metric: name and repr of the value; then the overflow count."""
    m = metrics(target, golden)
    with open(path, "w") as f:
        for k in NAMES:
            f.write("%s %r\n" % (k, m[k]))
        f.write("overflow %d\n" % overflow(target, golden))
