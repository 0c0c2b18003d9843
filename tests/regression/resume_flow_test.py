"""kill -9 and --resume of runs with bodies, emitters and whitewater give the uninterrupted run's bits (issue 45).

    /usr/bin/python3 resume_flow_test.py EDDY_CLI SCENES_DIR      (ctest: resume.flow)

For each case, a run goes straight to its end; the same run is started again with --checkpoint-every, killed
with SIGKILL as soon as its first periodic checkpoint is on disk (polled for, never a fixed sleep), resumed
with `eddy run --resume OUT`, and every output file of the final state is compared byte for byte with the
straight run's: every frame's particles (.csv, exact: 9 digits of a float; .vtp, binary), particles.pvd,
bodies.csv, frames/bodies_NNNNN.vtp, bodies.pvd, walls, forces.csv, frames/whitewater_NNNNN.vtp,
whitewater.pvd, whitewater.csv, and summary.json's steps, frames and counts.

Cases (bundled scenes, made small with --set / --until; the checkpoints between frames; the killed run on two
threads, the others on one):
- bodies_2d: floating_boxes_2d (DFSPH, five Box2D bodies), r = 1 cm, the checkpoint at 0.27 s: the heavy block
  reaches the floor (Box2D contact) after it;
- emitters_2d: river_channel_2d (a nozzle starting and stopping, an outflow domain cut to 0.3 m: particles come
  and go, ids never reused), the checkpoint at 0.37 s, while it emits and the outflow removes;
- whitewater_2d: dam_break_2d with --whitewater (spray, foam and bubbles made, moved and dying every step),
  the checkpoint at t = 0.23 s when there are some;
- bodies_3d: dam_break_debris_3d (DFSPH, eight Bullet bodies, stacked crates), r = 2 cm, the checkpoint at
  0.16 s as the front hits the crates.
Exit code 1 when any case differs (each case reported on its own line); no wall-clock assertion: the timeouts
are hang guards only.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EDDY = sys.argv[1]
SCENES = sys.argv[2]
HANG = 600  # s: a hang guard, not a performance bound

CASES = [
    # name, scene, run arguments (both runs), --checkpoint-every (s)
    ("bodies_2d", "floating_boxes_2d.json",
     ["--until", "0.6", "--fps", "20", "--set", "particle_radius=0.01"], 0.27),
    ("emitters_2d", "river_channel_2d.json",
     ["--until", "0.6", "--fps", "20", "--set", "domain.max=[0.3,0.6]", "--set", "emitters.0.speed=1",
      "--set", "emitters.0.start=0.02", "--set", "emitters.0.stop=0.45"], 0.37),
    # Whitewater made early (thresholds lowered, all three types), the checkpoint when it is there, between frames.
    ("whitewater_2d", "dam_break_2d.json",
     ["--until", "0.5", "--fps", "20", "--set", "particle_radius=0.005", "--whitewater",
      *[a for kv in ("trapped_air_min=0.5", "wave_crest_min=0.3", "kinetic_min=0.1", "lifetime_min=0.1",
                     "lifetime_max=0.3", "spray_neighbors=7", "bubble_neighbors=12") for a in ("--ww-set", kv)]],
     0.23),
    ("bodies_3d", "dam_break_debris_3d.json",
     ["--until", "0.3", "--fps", "40", "--set", "particle_radius=0.02"], 0.16),
]

# summary.json keys that must match (wall times, thread counts, run ids and messages may not).
SUMMARY_KEYS = ["steps", "simulated_time", "state_hash", "particles", "boundary_particles", "particles_at_end",
                "bodies", "emitted", "emitters", "removed", "mean_density_error", "max_density_error", "max_speed",
                "mean_iterations", "mean_divergence_iterations", "speed_bound"]


def eddy(*args):
    r = subprocess.run([EDDY, *args], capture_output=True, text=True, timeout=HANG)
    if r.returncode != 0:
        raise AssertionError(f"eddy {' '.join(args)}: exit {r.returncode}: {r.stdout}{r.stderr}")
    return r


def run_killed(out, scene, args, every):
    """The run with --checkpoint-every, killed with SIGKILL once its first checkpoint is there."""
    ckpt = os.path.join(out, "checkpoint.eddy")
    p = subprocess.Popen([EDDY, "run", scene, "-q", "--threads", "2", "--out", out, "--format", "csv,vtk",
                          "--checkpoint-every", str(every), *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + HANG
    while not os.path.exists(ckpt) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    p.send_signal(signal.SIGKILL)
    err = p.communicate(timeout=HANG)[1].decode()
    if p.returncode != -signal.SIGKILL:
        raise AssertionError(f"the run was not killed mid-way (exit {p.returncode}; it ended before the poll saw its "
                             f"checkpoint): {err}")
    status = json.load(open(os.path.join(out, "summary.json")))["status"]
    if status != "running":
        raise AssertionError(f"a killed run's summary.json says {status!r}")


def files_of(out):
    """Every output file but the checkpoint, the run's id, the picture and summary.json (wall times)."""
    skip = {"checkpoint.eddy", "run.json", "summary.json", "last_frame.png"}
    found = set()
    for base, _, names in os.walk(out):
        for n in names:
            rel = os.path.relpath(os.path.join(base, n), out)
            if rel not in skip and ".eddy-tmp-" not in n:
                found.add(rel)
    return found


def first_difference(a, b):
    """Where two files' bytes first differ: line number and both lines for text, else the byte offset."""
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    try:
        ta, tb = a.decode(), b.decode()
        line = ta[:n].count("\n")
        la, lb = ta.splitlines(), tb.splitlines()
        return (f"line {line + 1}: {la[line] if line < len(la) else '<end>'!r} vs "
                f"{lb[line] if line < len(lb) else '<end>'!r} ({len(a)} vs {len(b)} bytes)")
    except UnicodeDecodeError:
        return f"byte {n} ({len(a)} vs {len(b)} bytes)"


def compare(straight, resumed):
    """Differences between the two folders' outputs, as lines."""
    problems = []
    fa, fb = files_of(straight), files_of(resumed)
    for f in sorted(fa - fb):
        problems.append(f"{f}: missing after the resume")
    for f in sorted(fb - fa):
        problems.append(f"{f}: only after the resume")
    for f in sorted(fa & fb):
        a = open(os.path.join(straight, f), "rb").read()
        b = open(os.path.join(resumed, f), "rb").read()
        if a != b:
            problems.append(f"{f}: differs at {first_difference(a, b)}")
    sa = json.load(open(os.path.join(straight, "summary.json")))
    sb = json.load(open(os.path.join(resumed, "summary.json")))
    if sb.get("status") != "completed":
        problems.append(f"summary.json status {sb.get('status')!r} after the resume")
    fra, frb = sa.get("frames", []), sb.get("frames", [])
    if len(fra) != len(frb):
        problems.append(f"summary.json frames: {len(fra)} vs {len(frb)}")
    for x, y in zip(fra, frb):  # frame by frame, key by key: where they differ
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                problems.append(f"summary.json frames[{x.get('index')}].{k}: {json.dumps(x.get(k))[:300]} vs "
                                f"{json.dumps(y.get(k))[:300]}")
    for k in SUMMARY_KEYS:
        if k != "frames" and sa.get(k) != sb.get(k):
            problems.append(f"summary.json {k}: {json.dumps(sa.get(k))[:200]} vs {json.dumps(sb.get(k))[:200]}")
    return problems


def expect_in_straight(name, out):
    """The straight run has what the case is about (else the comparison would prove little)."""
    names = files_of(out)
    want = {"bodies_2d": ["bodies.csv", "bodies.pvd", "forces.csv"], "bodies_3d": ["bodies.csv", "bodies.pvd"],
            "whitewater_2d": ["whitewater.csv", "whitewater.pvd"], "emitters_2d": []}[name]
    missing = [w for w in want if w not in names]
    if missing:
        raise AssertionError(f"the straight run wrote no {missing}")
    s = json.load(open(os.path.join(out, "summary.json")))
    if name == "emitters_2d" and not (s.get("emitted", 0) > 0 and s.get("removed", {}).get("total", 0) > 0):
        raise AssertionError(f"nothing emitted and removed: emitted {s.get('emitted')}, removed {s.get('removed')}")
    if name == "whitewater_2d":
        csv = open(os.path.join(out, "whitewater.csv")).read().split()[1:]
        rows = [[int(x) for x in r.split(",")[2:]] for r in csv]
        if not all(any(r[k] > 0 for r in rows) for k in range(3)):
            raise AssertionError(f"not every type of whitewater (spray, foam, bubbles) in some frame: {rows}")
    if name.startswith("bodies"):
        moved = any(abs(v) > 1e-3 for b in s["bodies"] for v in b["velocity"])
        if not moved:
            raise AssertionError("no body moves at the end")


def main():
    tmp = tempfile.mkdtemp(prefix="eddy-resume-flow-")
    only = sys.argv[3:]  # optional case names
    failed = []
    for name, scene_file, args, every in CASES:
        if only and name not in only:
            continue
        scene = os.path.join(SCENES, scene_file)
        straight, killed = os.path.join(tmp, name, "straight"), os.path.join(tmp, name, "killed")
        try:
            eddy("run", scene, "-q", "--threads", "1", "--out", straight, "--format", "csv,vtk", *args)
            expect_in_straight(name, straight)
            run_killed(killed, scene, args, every)
            eddy("run", "--resume", killed, "-q", "--threads", "1")
            problems = compare(straight, killed)
        except (AssertionError, subprocess.TimeoutExpired) as e:
            problems = [str(e)]
        if problems:
            failed.append(name)
            print(f"resume.flow: {name}: FAILED ({len(problems)} problem(s)):")
            for p in problems[:40]:
                print(f"  {p}")
            if len(problems) > 40:
                print(f"  ... and {len(problems) - 40} more")
        else:
            print(f"resume.flow: {name}: same bits ({len(files_of(straight))} files)")
    if failed:
        print(f"resume.flow: FAILED: {', '.join(failed)} ({tmp})")
        sys.exit(1)
    shutil.rmtree(tmp, ignore_errors=True)
    print("resume.flow: OK")


main()
