#!/usr/bin/python3
"""Summarizes bench/history/run's work directory: detection, false positives, exit codes, interval coverage."""
import json
import pathlib
import statistics
import sys


def ready_means(runs_dir):
    """Ready mean (s) of each run of a series, in start order."""
    runs = []
    for summary in pathlib.Path(runs_dir).glob("*/summary.json"):
        s = json.loads(summary.read_text())
        ready = s["scenarios"][0]["milestones"]["ready"]
        runs.append((s["run"]["startedAt"], ready["meanS"]))
    return [m for _, m in sorted(runs)]


def main(work):
    work = pathlib.Path(work)
    at_1, at_13 = [], []
    series = {}
    for d in sorted(work.iterdir()):
        if not (d / "history" / "history.json").exists():
            continue
        seed, kind = d.name.split("-", 1)
        means = ready_means(d / "runs")
        if kind == "change":
            at_1 += means[:5]
            at_13 += means[5:]
        else:
            at_1 += means
        series[(int(seed), kind)] = (json.loads((d / "history" / "history.json").read_text()),
                                     int((d / "history.rc").read_text()))
    truth_diff = statistics.fmean(at_13) - statistics.fmean(at_1)
    truth_rel = statistics.fmean(at_13) / statistics.fmean(at_1) - 1
    print(f"true effect (all {len(at_1)} runs at 1 ms against all {len(at_13)} at 1.3 ms): "
          f"ready mean {statistics.fmean(at_1) * 1e3:.2f} -> {statistics.fmean(at_13) * 1e3:.2f} ms, "
          f"{truth_diff * 1e3:+.2f} ms ({truth_rel * 100:+.2f} %)")
    seeds = sorted({s for s, _ in series})
    exact, covered_diff, covered_rel, fail_rc, false_pos, none_rc = 0, 0, 0, 0, 0, 0
    for seed in seeds:
        doc, rc = series[(seed, "change")]
        cps = doc["groups"][0]["changePoints"]
        ready = None
        if len(cps) == 1 and cps[0]["index"] == 5:
            exact += 1
            ready = next(s for s in cps[0]["shifts"] if s["milestone"] == "ready")
            d, r = ready["differenceS"], ready["relative"]
            covered_diff += d["lower"] <= truth_diff <= d["upper"]
            covered_rel += r["lower"] is not None and r["lower"] <= truth_rel <= r["upper"]
        fail_rc += rc == 1
        ndoc, nrc = series[(seed, "none")]
        false_pos += len(ndoc["groups"][0]["changePoints"]) > 0
        none_rc += nrc == 0
        shown = (f"ready {ready['relative']['estimate'] * 100:+.1f} % "
                 f"[{ready['relative']['lower'] * 100:+.1f}, {ready['relative']['upper'] * 100:+.1f}]"
                 if ready else "no single change at run six")
        print(f"seed {seed:2}: raised: {len(cps)} change point(s) at "
              f"{[c['index'] + 1 for c in cps]}, {shown}, exit {rc}; "
              f"no change: {len(ndoc['groups'][0]['changePoints'])} change point(s), exit {nrc}")
    n = len(seeds)
    print(f"raised 30 %: exactly one change point at run six in {exact}/{n}; --fail-on-regression 10 exit 1 in "
          f"{fail_rc}/{n}; the 95 % interval covered the true effect in {covered_diff}/{exact} (difference) "
          f"and {covered_rel}/{exact} (relative)")
    print(f"no change: a change point in {false_pos}/{n} (false-positive rate {false_pos / n * 100:.0f} %); "
          f"exit 0 in {none_rc}/{n}")


if __name__ == "__main__":
    main(sys.argv[1])
