#!/usr/bin/env python3
"""A particle run on N processes against the same run on one (tests/distributed/ranks_test.sh):
every frame holds each particle once (ids: none lost, none doubled at a subdomain face), with the same
values as one process's, digit for digit (the CSV writes floats round-trip exact), and the same forces.csv
(the walls' loads); the summaries agree on
the run's statistics, and list N processes whose particles add up; the root holds every wall particle
(unless it writes them once: frames in pieces), the others those near their boxes; the processes but the root
built only the walls near their boxes where the fluid is built in shares: a new run ("new") whose start allows
it, or any resumed run ("pieces", "resume").
    particles_agree.py ONE_PROCESS_DIR N_PROCESSES_DIR N [new|pieces|resume]"""
import csv, json, os, sys

one, many, n = sys.argv[1], sys.argv[2], int(sys.argv[3])


def frame(path):
    rows = list(csv.reader(open(path)))
    head, body = rows[0], rows[1:]
    ids = [r[head.index("id")] for r in body]
    if len(set(ids)) != len(ids):
        sys.exit(f"FAIL: {path}: {len(ids) - len(set(ids))} particle ids appear twice")
    return head, {r[head.index("id")]: r for r in body}


names = sorted(f for f in os.listdir(f"{one}/frames") if f.endswith(".csv"))
if names != sorted(f for f in os.listdir(f"{many}/frames") if f.endswith(".csv")):
    sys.exit(f"FAIL: {many}: frames {os.listdir(many + '/frames')} vs one process's {names}")
for name in names:
    ha, a = frame(f"{one}/frames/{name}")
    hb, b = frame(f"{many}/frames/{name}")
    if ha != hb or a.keys() != b.keys():
        sys.exit(f"FAIL: {many}/frames/{name}: {len(b)} particles (ids differ), one process: {len(a)}")
    bad = [k for k in a if a[k] != b[k]]
    if bad:
        sys.exit(f"FAIL: {many}/frames/{name}: {len(bad)} particles differ, e.g. {a[bad[0]]} vs {b[bad[0]]}")
# The walls' loads (forces.csv): reduced over the processes in an order-free sum, so the same bits.
if os.path.exists(f"{one}/forces.csv") != os.path.exists(f"{many}/forces.csv"):
    sys.exit(f"FAIL: {many}/forces.csv: present on one side only")
if os.path.exists(f"{one}/forces.csv") and open(f"{one}/forces.csv").read() != open(f"{many}/forces.csv").read():
    sys.exit(f"FAIL: {many}/forces.csv differs from one process's")
# The bodies (bodies.csv): every process steps its own copy of them with the reduced loads.
if os.path.exists(f"{one}/bodies.csv") != os.path.exists(f"{many}/bodies.csv"):
    sys.exit(f"FAIL: {many}/bodies.csv: present on one side only")
if os.path.exists(f"{one}/bodies.csv") and open(f"{one}/bodies.csv").read() != open(f"{many}/bodies.csv").read():
    sys.exit(f"FAIL: {many}/bodies.csv differs from one process's")
sa, sb = json.load(open(f"{one}/summary.json")), json.load(open(f"{many}/summary.json"))
keys = ["status", "steps", "simulated_time", "particles", "max_density_error", "mean_density_error", "max_speed"]
keys += [k for k in ("particles_at_end", "emitted", "emitters", "removed") if k in sa or k in sb]  # issue 31
if "emitted" in sa:  # "particles" is the count a run started from: a resumed one's differs with emitters
    keys.remove("particles")
for k in keys:
    if sa.get(k) != sb.get(k):
        sys.exit(f"FAIL: {many}/summary.json: {k} = {sb.get(k)}, one process: {sa.get(k)}")
if n == 1:  # a run resumed on one process (from pieces): no "processes" record
    print(f"{many}: {len(names)} frames identical to one process's (one process)")
    sys.exit(0)
p = sb["processes"]
if p["ranks"] != n or len(p["particles_per_rank"]) != n:
    sys.exit(f"FAIL: {many}/summary.json: ranks {p['ranks']}, expected {n}")
counts = [int(c) for c in p["particles_per_rank"]]
# The processes hold the particles of the end (emitters and outflow change the count; issue 31).
at_end = sa.get("particles_at_end", sa["particles"])
if sum(counts) != at_end:
    sys.exit(f"FAIL: {many}/summary.json: per-rank particles {counts} do not add up to {at_end}")
walls, whole = [int(w) for w in p["walls_per_rank"]], sa["boundary_particles"]
if sb["boundary_particles"] != whole:
    sys.exit(f"FAIL: {many}/summary.json: boundary_particles = {sb['boundary_particles']}, one process: {whole}")
if p["root_holds_walls"] and walls[0] != whole or any(w > whole for w in walls) or sum(walls) < whole:
    sys.exit(f"FAIL: {many}/summary.json: wall particles per rank {walls}: each at most all {whole}, together at "
             f"least all (each in a box), the root all of them: {p['root_holds_walls']}")
# At the start (issue 44) the root builds every wall particle (it writes them) and, on a new run whose fluid is
# built in shares (every method but WCSPH's hydrostatic start; "new" as the 4th argument), each other process only
# the moving walls and the fixed walls near its box: fewer than all of them for some process in every such scene
# of these tests that starts with fluid (each has a fixed tank; with none, the boxes are not cut yet); a resume,
# in pieces ("pieces" as the 4th argument) or of a whole checkpoint ("resume"), builds its share as a start on
# shares does, for every method (no start runs on a resume: WCSPH's hydrostatic one neither). Otherwise (a new
# WCSPH run, or no 4th argument) every process builds them all.
built, near = [int(w) for w in p["walls_built_per_rank"]], p["walls_built_near_boxes"]
how = sys.argv[4] if len(sys.argv) > 4 else ""
expect_near = n > 1 and (how in ("pieces", "resume") or how == "new" and sa["method"] != "wcsph")
if near != expect_near or built[0] != whole or any(w > whole for w in built) \
        or (near and sa["particles"] > 0 and min(built[1:]) >= whole) or (not near and min(built) != whole):
    sys.exit(f"FAIL: {many}/summary.json: wall particles built per rank {built} (near the boxes: {near}, expected "
             f"{expect_near}): the root all {whole}, the others fewer near their boxes, else all")
if p["steps"] > p["rebalance_every"] and p["rebalances"] < 1:
    sys.exit(f"FAIL: {many}/summary.json: {p['steps']} steps and no rebalance (every {p['rebalance_every']})")
if p["halo_overruns"] != 0:
    sys.exit(f"FAIL: {many}/summary.json: {p['halo_overruns']} steps overran the halo's margin")
# The counts before each halo, migration and wall distribution go along the boxes' links (a box's partners:
# the boxes within the halo's reach; after a cut, from the old boxes to the new), never to all: each step
# builds one halo. Only the start's migration (each process holds a share of the whole set) and those of
# a particle that went further (an emitted one) go to all.
if p["counts_to_partners"] < p["steps"]:
    sys.exit(f"FAIL: {many}/summary.json: counts to partners {p['counts_to_partners']} times in {p['steps']} steps")
if "emitted" not in sa and p["counts_to_all"] > 1:
    sys.exit(f"FAIL: {many}/summary.json: counts to all {p['counts_to_all']} times, {p['rebalances']} rebalances")
if any(k > n - 1 for k in p["partners_per_rank"]):
    sys.exit(f"FAIL: {many}/summary.json: partners per rank {p['partners_per_rank']} with {n} processes")
print(f"{many}: {len(names)} frames (up to {max(len(frame(f'{one}/frames/{x}')[1]) for x in names)} particles) identical to one process's; per rank {counts}, "
      f"{p['decomposition']}, {p['rebalances']} rebalances, imbalance max {p['load_imbalance']:.3f}, "
      f"ghosts/step {[round(g) for g in p['ghosts_per_step']]}, walls built {built}, held {walls}, counts to partners "
      f"{p['counts_to_partners']} / to all {p['counts_to_all']}, partners {[int(k) for k in p['partners_per_rank']]}")
