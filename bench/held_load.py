"""The mean upward load on a boundary object held in a run (bench/box_offset_buoyancy.py, bench/ball_buoyancy.py):
`eddy run` of a scene file to 2 s with csv frames at 20 fps, forces.csv's fy of the object averaged over the frames
after 1 s (N; N/m in 2D)."""
import csv
import subprocess


def mean_lift(eddy, scene_path, out, method, threads, obj="2"):
    subprocess.run([eddy, "run", str(scene_path), "--until", "2", "--fps", "20", "--format", "csv", "-q", "--threads",
                    threads, "--set", f"method={method}", "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
    with open(out / "forces.csv") as f:
        fy = [float(row["fy"]) for row in csv.DictReader(f) if row["object"] == obj and float(row["time"]) > 1.0 + 1e-9]
    return sum(fy) / len(fy)
