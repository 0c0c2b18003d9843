"""Every bundled scene's bits against the bits recorded before a change (issue 41's safety net).

    /usr/bin/python3 scene_hashes_test.py EDDY_CLI SCENES_DIR HASHES_JSON             (ctest: scenes.hashes)
    /usr/bin/python3 scene_hashes_test.py EDDY_CLI SCENES_DIR HASHES_JSON --record    (make record-hashes)
    ... --only=NAME[,NAME]: some cases only;  --threads=1,2: both thread counts (the default with --record, or
        when this kind of CPU has no record; otherwise 2 threads, against the record)

Each case runs `eddy run SCENE --until 0.05 --fps 50` (3 frames: a few to a few hundred steps) and reads, from its output folder, summary.json's state_hash and a SHA-256 of every file it wrote:
frames, walls, surfaces, bodies.csv, forces.csv, whitewater, the .pvd lists and last_frame.png. Left out:
summary.json (wall times), run.json (the output path, thread count) and checkpoint.eddy (its run id and
wall times; tests/regression/checkpoint_test.cpp and resume.flow check that checkpoints resume bit for bit).
A record is made from runs on 1 and 2 threads that agree; the test then runs
each case on 2 threads (1 and 2 with --threads=1,2: Determinism.* already checks thread counts, and CI's time
is short) and compares with what tests/data/scene_hashes.json holds for this machine's kind of CPU.

A change meant to keep the bits (issue 41: one run loop, named passes) must pass unchanged. A change meant
to move them (a physics fix) re-records with `make record-hashes` and says so in its commit. The recorded
bits are per kind of CPU (its vector extensions: -march=native, Eigen's packet width and libm's variants may
differ between them): on a CPU with no record the test still checks 1 against 2 threads, prints how to add
the record, and passes. A case that needs what this eddy was built without is skipped with its message.
Exit code 1 on any difference, each case on its own line.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

UNTIL, FPS = "0.05", "50"
IGNORED = {"summary.json", "run.json", "checkpoint.eddy"}

# Extra cases beyond each bundled scene as shipped: the outputs that are only written on request.
VARIANTS = [
    ("dam_break_2d+csv", "dam_break_2d", ["--format", "csv"]),
    ("dam_break_3d+whitewater", "dam_break_3d", ["--whitewater"]),
    ("dfsph_dam_break_3d+mesh", "dfsph_dam_break_3d", ["--mesh"]),
    ("dam_gate_2d+wall_pressure", "dam_gate_2d", ["--wall-pressure"]),
    ("shallow_drops+csv", "shallow_drops", ["--format", "csv"]),
]


def cpu_kind():
    """The vector extensions that change which code runs (not the CPU's name)."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    wanted = ["avx512f", "avx512vl", "avx512bw", "avx512dq", "avx2", "fma", "avx", "sse4_2"]
    return os.uname().machine + ":" + ",".join(f for f in wanted if f in flags)


def cases(scenes_dir):
    out = []
    for name in sorted(os.listdir(scenes_dir)):
        if name.endswith(".json"):
            stem = name[:-5]
            out.append((stem, stem, []))
    out += VARIANTS
    return out


def fingerprint(cli, scenes_dir, scene, extra, threads, work):
    """{state_hash, files: {path: sha256[:16]}} of one run, or a string saying why it was skipped."""
    out = os.path.join(work, f"{scene}_{threads}")
    shutil.rmtree(out, ignore_errors=True)
    cmd = [cli, "run", os.path.join(scenes_dir, scene + ".json"), "--until", UNTIL, "--fps", FPS, "-o", out,
           "-j", str(threads)] + extra
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1800)
    if p.returncode != 0:
        message = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        if "built without" in message:
            return "skipped: " + message
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {message}")
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    files = {}
    for root, _, names in os.walk(out):
        for n in names:
            path = os.path.join(root, n)
            rel = os.path.relpath(path, out)
            if rel in IGNORED:
                continue
            with open(path, "rb") as f:
                files[rel] = hashlib.sha256(f.read()).hexdigest()[:16]
    shutil.rmtree(out, ignore_errors=True)
    return {"state_hash": summary.get("state_hash", ""), "steps": summary.get("steps"),
            "files": dict(sorted(files.items()))}


def differences(a, b):
    """What differs between two fingerprints, in one line."""
    parts = []
    if a["state_hash"] != b["state_hash"]:
        parts.append(f"state_hash {a['state_hash']} vs {b['state_hash']}")
    if a.get("steps") != b.get("steps"):
        parts.append(f"steps {a.get('steps')} vs {b.get('steps')}")
    fa, fb = a["files"], b["files"]
    changed = sorted(k for k in fa.keys() & fb.keys() if fa[k] != fb[k])
    if changed:
        parts.append(f"{len(changed)} files differ ({', '.join(changed[:3])}{', ...' if len(changed) > 3 else ''})")
    only_a, only_b = sorted(fa.keys() - fb.keys()), sorted(fb.keys() - fa.keys())
    if only_a:
        parts.append(f"only in this run: {', '.join(only_a[:3])}")
    if only_b:
        parts.append(f"missing: {', '.join(only_b[:3])}")
    return "; ".join(parts)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    record = "--record" in argv
    only, both = None, record
    for a in argv[1:]:
        if a.startswith("--only="):
            only = set(a.split("=", 1)[1].split(","))
        if a.startswith("--threads="):
            both = both or a.split("=", 1)[1].split(",") == ["1", "2"]
    if len(args) != 3:
        print(__doc__.strip().splitlines()[2])
        return 2
    cli, scenes_dir, hashes_path = args
    kind = cpu_kind()
    recorded = {}
    if os.path.exists(hashes_path):
        with open(hashes_path) as f:
            recorded = json.load(f)
    mine = recorded.get(kind)
    both = both or mine is None
    if mine is None and not record:
        print(f"scenes.hashes: no bits recorded for this kind of CPU ({kind}); checking 1 against 2 threads only. "
              f"Add them with: make record-hashes")
    failures, fresh = 0, {}
    work = tempfile.mkdtemp(prefix="eddy_hashes_")
    try:
        for name, scene, extra in cases(scenes_dir):
            if only and name not in only:
                continue
            one = fingerprint(cli, scenes_dir, scene, extra, 2, work)
            if isinstance(one, str):
                print(f"skip  {name}: {one}")
                continue
            line = f"{name} ({one['steps']} steps, {len(one['files'])} files, state_hash {one['state_hash']})"
            d = differences(fingerprint(cli, scenes_dir, scene, extra, 1, work), one) if both else ""
            if d:
                print(f"FAIL  {line}: 1 and 2 threads differ: {d}")
                failures += 1
                continue
            fresh[name] = one
            if record or mine is None:
                print(f"ok    {line}" + (" recorded" if record else ""))
            elif name not in mine:
                print(f"FAIL  {line}: not recorded (a new scene or case: make record-hashes)")
                failures += 1
            else:
                d = differences(one, mine[name])
                print(f"{'FAIL' if d else 'ok  '}  {line}" + (f": against the recorded bits: {d}" if d else ""))
                failures += bool(d)
        if mine is not None and not record and only is None:
            for name in sorted(mine.keys() - fresh.keys()):
                print(f"note  {name}: recorded but not run here (a scene removed, or skipped above)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if record:
        if failures:
            print("scenes.hashes: not recorded: the thread counts differ (above)")
            return 1
        if only is not None and mine is not None:
            mine.update(fresh)
            fresh = mine
        recorded[kind] = dict(sorted(fresh.items()))
        tmp = hashes_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(recorded, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, hashes_path)
        print(f"scenes.hashes: recorded {len(fresh)} cases for {kind} in {hashes_path}")
        return 0
    if failures:
        print(f"scenes.hashes: {failures} case(s) differ. If the change means to move these bits, re-record with "
              f"`make record-hashes` and say so in the commit.")
        return 1
    print("scenes.hashes: every case " + ("the same bits on 1 and 2 threads" if both else "on 2 threads")
          + ("" if mine is None else (" and " if both else " ") + "as recorded"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
