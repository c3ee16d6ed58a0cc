#!/usr/bin/env python3
"""Densification side by side (issue 12): splatc's --log lines against gsplat's
DefaultStrategy(verbose=True) output, as a table at the steps splatc logged.

    python3 bench/refines_side_by_side.py SPLATC_LOG.jsonl GSPLAT_OUTPUT.txt [--every 1000]

splatc's lines carry running totals (refines, cloned, split, pruned; docs/TRAIN.md, "--log");
gsplat prints two lines per refine:
    Step 600: 1234 GSs duplicated, 567 GSs split. Now having 123456 GSs.
    Step 600: 89 GSs pruned. Now having 123367 GSs.
which this sums up to each splatc step. The two runs refine at the same steps (after steps
600, 700, ... in gsplat's numbering: it counts the step just done, splatc the steps done), so a
row compares both after the same refines. Standard library only.
"""
import argparse
import json
import re
import sys

GROW = re.compile(r"^Step (\d+): (\d+) GSs duplicated, (\d+) GSs split\. Now having (\d+) GSs\.")
PRUNE = re.compile(r"^Step (\d+): (\d+) GSs pruned\. Now having (\d+) GSs\.")


def gsplat_refines(path):
    """{step: [cloned, split, pruned, count after]} from gsplat's verbose lines."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = GROW.match(line.strip())
            if m:
                s = int(m.group(1))
                out.setdefault(s, [0, 0, 0, 0])
                out[s][0], out[s][1], out[s][3] = int(m.group(2)), int(m.group(3)), int(m.group(4))
                continue
            m = PRUNE.match(line.strip())
            if m:
                s = int(m.group(1))
                out.setdefault(s, [0, 0, 0, 0])
                out[s][2], out[s][3] = int(m.group(2)), int(m.group(3))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("splatc_log")
    p.add_argument("gsplat_output")
    p.add_argument("--every", type=int, default=1000, help="a row at the first splatc line past each multiple of this")
    a = p.parse_args()
    lines = []
    with open(a.splatc_log, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                lines.append(json.loads(line))
    g = gsplat_refines(a.gsplat_output)
    if not lines or not g:
        sys.exit(f"nothing to compare: {len(lines)} splatc lines, {len(g)} gsplat refines")
    steps = sorted(g)
    print("| step | splatc Gaussians | gsplat Gaussians | splatc cloned / split / pruned | gsplat cloned / split / pruned |")
    print("| --- | --- | --- | --- | --- |")
    next_row = 0
    for rec in lines:
        s = rec["step"]
        if s < next_row and rec is not lines[-1]:
            continue
        next_row = (s // a.every + 1) * a.every
        done = [k for k in steps if k < s]  # gsplat's refine at step k is done once splatc has done k + 1 steps
        gc = sum(g[k][0] for k in done)
        gs = sum(g[k][1] for k in done)
        gp = sum(g[k][2] for k in done)
        gcount = g[done[-1]][3] if done else None
        print(f"| {s} | {rec.get('gaussians', '?')} | {gcount if gcount is not None else '-'} | "
              f"{rec.get('cloned', 0)} / {rec.get('split', 0)} / {rec.get('pruned', 0)} | {gc} / {gs} / {gp} |")


if __name__ == "__main__":
    main()
