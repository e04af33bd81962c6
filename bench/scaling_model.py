# SPDX-License-Identifier: BSD-3-Clause
"""bench/scaling_model.py [RATES.md]: docs/SCALING.md's tables of modelled
strong and weak scaling of a distributed fit, from the rates that
bench/dist_rates.c measured (default: bench/results/dist_rates.md).

Measured (read from RATES.md):
  R       rows x D^2 per second of rfx_stats_add (transform + tiled SYRK) on
          one machine, at D = 2048;
  S(D)    rfx_ridge_solve on one rank at D = 1024, 2048 (extrapolated as D^3);
  O(D)    rfx_dist_stats_reduce minus MPI_Allreduce on loopback: the
          library's pack, unpack and check-in (extrapolated as D^2 from the
          largest D measured).
Modelled (the alpha-beta model of an allreduce, ring for the bytes and a
tree for the latency, Thakur, Rabenseifner & Gropp 2005):
  T_reduce(P) = 2 ceil(log2 P) alpha + 2 (P - 1) / P * M / B + O(D)
  with M = 8 (D (D + 1) / 2 + 2 D + 5) bytes, the packed statistics of one
  target, and for the networks assumed (not measured here):
    10 Gb/s Ethernet:     B = 1.1 GB/s,  alpha = 25 us
    100 Gb/s InfiniBand:  B = 11 GB/s,   alpha = 2 us
  T_fit(P) = n D^2 / (P R) + T_reduce(P) + S(D).
Prints markdown.
"""
import math
import os
import re
import sys

NETWORKS = [("10 Gb/s", 1.1e9, 25e-6), ("100 Gb/s", 11e9, 2e-6)]
MACHINES = [8, 16, 32, 64, 128, 256, 512]


def read_rates(path):
    text = open(path).read()
    rates = {"syrk": {}, "solve": {}, "allreduce": {}, "reduce": {}}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[0].isdigit() and "." in cells[2]:
            D = int(cells[0])
            rates["allreduce"][D] = float(cells[3])
            rates["reduce"][D] = float(cells[6])
        elif len(cells) == 6 and cells[0].isdigit():
            D = int(cells[0])
            rates["syrk"][D] = float(cells[4]) * 1e9  # rows x D^2 per second
            rates["solve"][D] = float(cells[5])
        m = re.match(r"\|\s*8-byte MPI_Allreduce latency\s*\|\s*([\d.]+) us", line)
        if m:
            rates["latency"] = float(m.group(1)) * 1e-6
    return rates


def model(rates, D, n_total, P, bw, alpha):
    R = rates["syrk"][2048]
    M = 8.0 * (D * (D + 1) / 2 + 2 * D + 5)
    Dm = max(rates["reduce"])
    overhead = max(rates["reduce"][Dm] - rates["allreduce"][Dm], 0.0) * (D / Dm) ** 2
    solve = rates["solve"][2048] * (D / 2048.0) ** 3
    compute = n_total * D * D / (P * R)
    reduce = 2 * math.ceil(math.log2(P)) * alpha + 2 * (P - 1) / P * M / bw + overhead
    return compute, reduce, solve


def table(rates, D, rows, strong):
    R = rates["syrk"][2048]
    head = "%.0e rows in all" % rows if strong else "%.0e rows per machine" % rows
    print("\n**D = %d, %s** (one machine: %.0f s to accumulate them, %.2f s to solve)\n"
          % (D, head, rows * D * D / R, rates["solve"][2048] * (D / 2048.0) ** 3))
    print("| machines | accumulate s | " + " | ".join(
        "reduce s (%s) | fit s (%s) | efficiency (%s)" % (n, n, n) for n, _, _ in NETWORKS)
        + " |")
    print("|---" * (2 + 3 * len(NETWORKS)) + "|")
    for P in MACHINES:
        n_total = rows if strong else rows * P
        cells = []
        for name, bw, alpha in NETWORKS:
            c, r, s = model(rates, D, n_total, P, bw, alpha)
            fit = c + r + s
            # strong: speed-up over one machine / P; weak: one machine's
            # fit of its own rows over this fit
            c1, _, s1 = model(rates, D, rows, 1, bw, alpha)  # no reduction on one machine
            eff = (c1 + s1) / (P * fit) if strong else (c1 + s1) / fit
            cells += ["%.3g" % r, "%.4g" % fit, "%.0f%%" % (100 * eff)]
        c = model(rates, D, n_total, P, *NETWORKS[0][1:])[0]
        print("| %d | %.4g | %s |" % (P, c, " | ".join(cells)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "dist_rates.md")
    rates = read_rates(path)
    print("Measured on this machine (`%s`): R = %.1f GFLOP/s at D = 2048 (n D^2 per second), "
          "solve %.3f s at D = 2048; loopback allreduce latency %.1f us."
          % (os.path.relpath(path, os.path.dirname(here)), rates["syrk"][2048] / 1e9, rates["solve"][2048],
             rates.get("latency", float("nan")) * 1e6))
    print("\n### Strong scaling: a fixed data set over more machines")
    table(rates, 2048, 1e8, True)
    table(rates, 8192, 1e7, True)
    print("\n### Weak scaling: a fixed share of rows per machine")
    table(rates, 2048, 1e6, False)
    table(rates, 8192, 1e5, False)


if __name__ == "__main__":
    main()
