#!/usr/bin/env python3
"""Timing accuracy of one storm against the simulator's ground truth (bench/run uses it; see bench/README.md).

usage: storm_accuracy.py [--attached [--tap TAP_JSONL]] RUN_DIR TRUTH_JSON [CPU_SAMPLES]

For every push milestone (KubeVirt watch: scheduled, running, guest_agent, ip_assigned) of every VM it
compares the journal's observation (full-precision wall time, stated resolution) with the lab's truth:
  observation error = observed - delivered   (delivered: the lab handed the watch frame to the socket)
      -> the orchestrator's measurement error; must be <= the stated resolution, target P99 <= 10 ms
  lab write         = written - delivered (written: the lab's event loop ran the write's completion) -> the
                      lab's own share of the observation error, an upper bound: the bytes usually reach the
                      socket when the write is initiated, before the loop gets round to the completion
  after write       = observed - written (negative when the client read the line before the lab's loop ran
                      the completion)
  publication lag   = delivered - model time (the simulator's own lag, not a measurement error), split into
                      apply lag (visible - model: the lab's loop applying the change) and hold (delivered -
                      visible: no wait of the client's was on the lab when the change became visible)
  ready vs truth    = the ready (guest_agent) distribution's P50 and P95 as measured (offset from
                      start_requested) and as the truth has it (model time - start_requested, i.e. the model's
                      boot plus the start's transit)
  boot-time error   = offset from start_requested - (model time - startReceived) (both lags included)
  start transit     = startReceived - start_requested
  received spread   = last startReceived - first startReceived (the fire as the API server saw it)
--attached: the lab was attached to a real API server (`bootstorm lab attach`), which writes the watch frames
itself. The server accepted the write carrying a milestone within [visibleSince, visible] (the lab sent it,
the lab read the answer); the observation error is the distance of the observation from that interval (0
inside it), beyond the resolution when the observation came before the write was sent (impossible) or more
than its stated resolution after the answer. It includes the server's own watch latency.
--tap: realapi's -watch-tap record of when kube-apiserver flushed each VMI watch event to each client. The
observation is then measured as against the lab's front: from when the server handed the first event carrying
the milestone (resourceVersion >= the truth's visibleVersion) to bootstorm's watch ([t0, t]: its first byte
written, its flush returned; 0 inside it). The server's own share is printed apart: serverWatchLatency = that
flush's end - the answer to the write (visible).
CPU_SAMPLES: lines "unix_time cpu_seconds" of the `bootstorm run` process (bench/run samples /proc/PID/stat);
the CPU during observe is the CPU used from the first start written to the last milestone observed.
Prints one line of key=value figures.
"""
import json
import math
import sys


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]


def load_tap(path):
    """{vm: [(rv, t0, t)]} of the flushes to bootstorm's watches, sorted by time."""
    flushes = {}
    for line in open(path):
        r = json.loads(line)
        if r["agent"].startswith("bootstorm/kubevirt") and r["type"] != "DELETED" and r["rv"].isdigit():
            flushes.setdefault(r["name"], []).append((int(r["rv"]), r["t0"], r["t"]))
    for events in flushes.values():
        events.sort(key=lambda e: e[2])
    return flushes


def first_flush(tap, vm, version):
    """(t0, t) of the first event to bootstorm's watch that carried `version` or later, None without one."""
    if version is None or not version.isdigit():
        return None
    for rv, t0, t in tap.get(vm, ()):
        if rv >= int(version):
            return t0, t
    return None


def distance(at, interval):
    """Signed distance of `at` from [begin, end]: negative before it, 0 inside."""
    if at < interval[0]:
        return at - interval[0]
    return max(0.0, at - interval[1])


def main():
    args = sys.argv[1:]
    attached = bool(args) and args[0] == "--attached"
    if attached:
        args = args[1:]
    tap = None
    if attached and args and args[0] == "--tap":
        tap = load_tap(args[1])
        args = args[2:]
    sys.argv = [sys.argv[0]] + args
    run_dir, truth_path = sys.argv[1], sys.argv[2]
    truth = {v["name"]: v for v in json.load(open(truth_path))["vms"]}
    seen = {}
    fire_skew = None
    for line in open(run_dir + "/journal.jsonl"):
        event = json.loads(line)
        if event.get("type") == "storm_fired":
            fire_skew = event.get("fireSkewMs")
        if event.get("type") == "milestone":
            seen.setdefault(event["vm"], {})[event["milestone"]] = event
    obs, lag, boot, transit, res, received, lab_write, after_write = [], [], [], [], [], [], [], []
    signed, server_latency = [], []
    agent_res, apply_lag, hold, ready_measured, ready_truth = [], [], [], [], []
    over = missing = 0
    first_start, last_seen = math.inf, 0.0
    for vm, events in seen.items():
        t = truth.get(vm)
        if not t or "start_requested" not in events:
            continue
        start = events["start_requested"]["wall"]
        first_start = min(first_start, start)
        transit.append(t["startReceived"] - start)
        received.append(t["startReceived"])
        for m in ("scheduled", "running", "guest_agent", "ip_assigned"):
            e = events.get(m)
            if not e or e.get("source") != "watch":
                continue
            last_seen = max(last_seen, e["wall"])
            delivered = t.get("visible" if attached else "delivered", {}).get(m)
            if delivered is None:
                missing += 1
                continue
            error = e["wall"] - delivered
            if tap is not None:
                flush = first_flush(tap, vm, t.get("visibleVersion", {}).get(m))
                if flush is None:
                    missing += 1
                    continue
                server_latency.append(flush[1] - delivered)
                signed.append(e["wall"] - flush[1])
                error = distance(e["wall"], flush)
            elif attached:
                since = t.get("visibleSince", {}).get(m, delivered)
                signed.append(error)
                if e["wall"] < since:
                    error = e["wall"] - since
                elif e["wall"] <= delivered:
                    error = 0.0
            written = t.get("written", {}).get(m)
            if written is not None:
                lab_write.append(written - delivered)
                after_write.append(e["wall"] - written)
            obs.append(abs(error))
            res.append(e["resolutionS"])
            if m == "guest_agent":
                agent_res.append(e["resolutionS"])
            if error > e["resolutionS"] + 0.002 or error < -0.002:
                over += 1
            lag.append(delivered - t["milestones"][m])
            visible = t.get("visible", {}).get(m)
            if visible is not None:
                apply_lag.append(visible - t["milestones"][m])
                hold.append(delivered - visible)
            if m == "guest_agent":
                ready_measured.append(e["offsetS"])
                ready_truth.append(t["milestones"][m] - start)
            boot.append(abs(e["offsetS"] - (t["milestones"][m] - t["startReceived"])))
    cpu = ""
    if len(sys.argv) > 3:
        samples = [tuple(map(float, l.split())) for l in open(sys.argv[3]) if l.strip()]
        inside = [s for s in samples if first_start <= s[0] <= last_seen]
        if len(inside) >= 2 and inside[-1][0] > inside[0][0]:
            cpu = f" observeCpuCores={(inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0]):.2f}"
    ms = lambda x: f"{x * 1000:.1f}"
    print(f"pushMilestones={len(obs)} observationErrorP50Ms={ms(pct(obs, .5))} observationErrorP99Ms={ms(pct(obs, .99))} "
          f"observationErrorMaxMs={ms(max(obs) if obs else float('nan'))} beyondResolution={over} undelivered={missing} "
          f"resolutionP50Ms={ms(pct(res, .5))} resolutionP99Ms={ms(pct(res, .99))} "
          f"guestAgentResolutionP95Ms={ms(pct(agent_res, .95))} "
          f"labWriteP50Ms={ms(pct(lab_write, .5))} labWriteP99Ms={ms(pct(lab_write, .99))} "
          f"afterWriteP50Ms={ms(pct(after_write, .5))} afterWriteP99Ms={ms(pct(after_write, .99))} "
          f"publicationLagP50Ms={ms(pct(lag, .5))} publicationLagP99Ms={ms(pct(lag, .99))} "
          f"applyLagP99Ms={ms(pct(apply_lag, .99))} holdP50Ms={ms(pct(hold, .5))} holdP99Ms={ms(pct(hold, .99))} "
          f"readyP50Ms={ms(pct(ready_measured, .5))} truthReadyP50Ms={ms(pct(ready_truth, .5))} "
          f"readyP95Ms={ms(pct(ready_measured, .95))} truthReadyP95Ms={ms(pct(ready_truth, .95))} "
          f"readyP50ErrorMs={ms(pct(ready_measured, .5) - pct(ready_truth, .5))} "
          f"readyP95ErrorMs={ms(pct(ready_measured, .95) - pct(ready_truth, .95))} "
          f"bootErrorVsModelP99Ms={ms(pct(boot, .99))} startTransitP99Ms={ms(pct(transit, .99))} "
          f"receivedSpreadMs={ms(max(received) - min(received)) if received else float('nan')} "
          f"journalFireSkewMs={fire_skew}{cpu}"
          + (f" signedErrorP1Ms={ms(pct(signed, .01))} signedErrorP50Ms={ms(pct(signed, .5))} "
             f"signedErrorP99Ms={ms(pct(signed, .99))}" if attached else "")
          + (f" serverWatchLatencyP50Ms={ms(pct(server_latency, .5))} "
             f"serverWatchLatencyP99Ms={ms(pct(server_latency, .99))}" if tap is not None else ""))


if __name__ == "__main__":
    main()
