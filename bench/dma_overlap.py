"""How much DMA time the compute hides, from `cstatic run --dma-trace`.

usage: dma_overlap.py MODEL_DIR INPUT.npy [ROUNDS]

(bench/conv_stack.py writes the spec's conv stack and its input.)

Runs the compiled (staged or DMA-tiled: -mcpu=c7x) model ROUNDS times
(default 9), each with a DMA trace, and prints one JSON object: per round
and as medians, the DMA busy time, the share of it that overlaps a traced
layer call on another CPU (the trace's own "dma_hidden_share": a copy
thread that runs on the model's core while the model is preempted hides
nothing; an event that moved between CPUs counts as on the same one), the
DMA time left exposed
(busy minus hidden: what the copies add to the inference; faster copies
lower it, and may lower the share too), and the same split by queue: queue 0 holds each layer's own copies (input, weight tiles, H
strips), queue 1 the next-layer weight prefetches, queue 2 the H-tiled
convs' output rows going out of L2. Also the machine's 1-minute load average
before and after, since on a loaded machine the copy thread may wait for a
core (a copy starts late and is then less hidden): name it beside every
figure you quote. Where other jobs keep both cores busy, the copy thread
(kept off the model's core) waits for its turn on the other one, and the
share varies from round to round; as root, `chrt -f 10 python
bench/dma_overlap.py ...` runs the model (both threads) ahead of them, as
on the board's dedicated core and DMA.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CSTATIC = os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic"))


def overlap(a, b, spans):
    """Time of [a, b) covered by the union of spans (sorted, merged)."""
    return sum(max(0.0, min(b, e) - max(a, s)) for s, e in spans)


def merged(spans):
    out = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


MOVED, UNKNOWN = -2, -1  # tidsp_dma_event.cpu (cstatic/dma.h)


def beside(a, b):
    """Whether a copy on CPU a runs beside a call on CPU b (dma_trace.c)."""
    if MOVED in (a, b):
        return False
    return UNKNOWN in (a, b) or a != b


def one_round(model_dir, x, tmp):
    trace = os.path.join(tmp, "t.json")
    subprocess.run([CSTATIC, "run", model_dir, "--input", x, "--output", os.path.join(tmp, "y.npy"),
                    "--dma-trace", trace], check=True, capture_output=True)
    with open(trace) as f:
        t = json.load(f)
    ev = t["traceEvents"]
    calls = [e for e in ev if e["cat"] == "compute"]
    per_q = {}
    for e in ev:
        if e["cat"] != "dma":
            continue
        cpu = e["args"].get("cpu", UNKNOWN)  # a trace from a cstatic without CPUs: unknown
        compute = merged([(c["ts"], c["ts"] + c["dur"]) for c in calls
                          if beside(cpu, c.get("args", {}).get("cpu", UNKNOWN))])
        q = per_q.setdefault(e["tid"] - 1, [0.0, 0.0])
        q[0] += e["dur"]
        q[1] += overlap(e["ts"], e["ts"] + e["dur"], compute)
    s = t["cstatic"]
    return {"dma_busy_us": s["dma_busy"] / 1e3, "hidden_share": s["dma_hidden_share"],
            "exposed_us": (s["dma_busy"] - s["dma_hidden"]) / 1e3,
            "queues": {q: {"busy_us": v[0], "hidden_share": v[1] / v[0] if v[0] else 0.0}
                       for q, v in sorted(per_q.items())}}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model_dir, x = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        rs = [one_round(model_dir, x, tmp) for _ in range(rounds)]
    med = {"dma_busy_us": statistics.median(r["dma_busy_us"] for r in rs),
           "hidden_share": statistics.median(r["hidden_share"] for r in rs),
           "exposed_us": statistics.median(r["exposed_us"] for r in rs),
           "queues": {q: {k: statistics.median(r["queues"][q][k] for r in rs) for k in ("busy_us", "hidden_share")}
                      for q in rs[0]["queues"]}}
    print(json.dumps({"model": model_dir, "rounds": rounds, "load_before": load0, "load_after": os.getloadavg()[0],
                      "median": med, "hidden_share_per_round": [round(r["hidden_share"], 3) for r in rs]}, indent=1))


if __name__ == "__main__":
    main()
