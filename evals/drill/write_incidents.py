#!/usr/bin/env python3
"""Write the drill evaluation set: DIR/<case-id>/bundle/... and DIR/<case-id>/truth.json.
Standard library only; deterministic (seeded per case, no wall clock, gzip mtime=0)."""
import argparse, os, random, shutil, sys, zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet import Case  # noqa: E402
import cases  # noqa: E402
from render import render  # noqa: E402

DAY = 86400


def build(i, fn):
    cid = "dr-%02d" % (i + 1)
    rng = random.Random(zlib.crc32(cid.encode()))
    C = Case(cid, rng, cases.BASE + i * DAY)
    C.job = ["llm-34b-pretrain", "vit-g-14", "pretrain-70b", "moe-8x22b", "llm-13b-sft", "roce-bench-ft", "llama-ft-roce",
             "tenant-a-pretrain", "xrack-7b", "dense-20b", "h200-30b", "hdr-climate", "roce-13b", "a100-asr",
             "frontier-2k", "gpt-hang", "seq2seq-xl", "tp8-40b", "512gpu-mix", "llm-loss", "a100-ft", "gpu-c-run",
             "a100-cv", "mm-pretrain", "256-pretrain", "launcher-v2", "roce-img", "e-series", "a100-long",
             "roce-tenant", "requeue-32", "k-series"][i]
    C.job_id = "%s-%s" % (cid, C.job)
    fn(C)
    return C


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for i, fn in enumerate(cases.CASES):
        cid = "dr-%02d" % (i + 1)
        if a.only and cid not in a.only.split(","):
            continue
        C = build(i, fn)
        d = os.path.join(a.out, cid)
        if os.path.exists(d):
            shutil.rmtree(d)
        render(C, d)
        print(cid, C.truth[0], C.truth[1])


if __name__ == "__main__":
    main()
