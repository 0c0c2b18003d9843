"""`eddy whitewater RUN_DIR` on crafted run folders (issue 45): never a crash, a hang, an unbounded read or a
write outside the run folder.

    /usr/bin/python3 whitewater_hostile_test.py EDDY_CLI      (ctest: files.whitewater_hostile)
    WW_HOSTILE_CASES=name,name ... runs only those cases

Makes two tiny runs to craft from (square_2d at r = 2 cm, 100 particles, frames in .vtp, .csv and .ply; a 3D
scene of its own with an OBJ obstacle, 64 particles), then runs `eddy whitewater` on copies spoiled one way
each: the folder (missing, a file, empty), summary.json (a FIFO, /dev/zero, a 100 GB sparse file, not JSON,
missing or wrong-typed keys, frames out of order), the frames (a FIFO, /dev/zero, a 100 GB sparse file, links
out of the folder, truncated, a wrong header, NaN positions, counts and binary sizes that lie, .pvtp pieces
outside the folder), the scene it names (scene_file and models outside the folder, FIFOs, sparse files), the
outputs (frames/ a link out of the folder, links and folders planted at the output names) and unreadable
files (as user nobody through setpriv when run as root; skipped without setpriv). Where a case needs the
steps to make whitewater, its settings make some from the tiny runs' slow fluid (MAKE).

Every command runs under a kill timeout (60 s; the cases take well under a second each) and is measured from
its own process: the bytes it read (/proc/PID/io rchar, read while it is a zombie) and its peak memory
(wait4's ru_maxrss, which includes this script's at the fork), neither of which depends on the machine's
load. Every case must end by itself, read at most 64 MB (the run folders hold about 100 kB), keep under 1 GB,
change nothing outside its run folder (everything else under the test's temporary folder compared by lstat
before and after), write only finite whitewater particles when it succeeds, and when it fails print exactly
one line naming the file and what is wrong. Bad input is exit code 2; a folder whose outputs cannot be
written may be 1 ("failure") or 2. Where the documented behaviour is a warning (the run's scene cannot be
reloaded: whitewater without walls, docs/whitewater.md), exit 0 with one warning line naming the file is
accepted instead. Exit 1 on a failed case (all cases are run and listed first).
"""
import json
import os
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

EDDY = os.path.abspath(sys.argv[1])
TIMEOUT_S = 60
MAX_READ = 64 << 20
MAX_RSS_KB = 1 << 20
# truncate -s 100G (no disk), or twice the machine's memory when that is more: never a size it could take in.
SPARSE = 100 << 30
try:
    with open("/proc/meminfo") as _f:
        SPARSE = max(SPARSE, 2 * 1024 * int(next(l for l in _f if l.startswith("MemTotal:")).split()[1]))
except (OSError, StopIteration, ValueError):
    pass
BIG = "%d bytes" % SPARSE
# Settings that make whitewater from the tiny runs' slow fluid (the defaults make none there), so that the
# steps run on what a case spoils.
MAKE = ["--set", "kinetic_min=0", "--set", "kinetic_max=0.001", "--set", "trapped_air_min=0", "--set",
        "trapped_air_max=0.001", "--set", "wave_crest_min=0", "--set", "wave_crest_max=0.001"]

TETRA_OBJ = "v 0 0 0\nv 0.3 0 0\nv 0 0.3 0\nv 0 0 0.3\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def fail(msg):
    print("files.whitewater_hostile: FAIL: " + msg)
    sys.exit(1)


def run_timed(cmd, cwd, as_nobody=False):
    """Runs cmd; returns (code, stderr, rchar, maxrss_kb, timed_out). code < 0: killed by that signal."""
    if as_nobody:
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + cmd
    with tempfile.TemporaryFile() as err:  # unnamed, outside the folders compared
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + TIMEOUT_S
        timed_out = False
        while True:
            r = os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            if r is not None:
                break
            if time.monotonic() > deadline:
                timed_out = True
                p.kill()
                os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
                break
            time.sleep(0.01)
        rchar = -1
        try:
            with open("/proc/%d/io" % p.pid) as f:
                for line in f:
                    if line.startswith("rchar:"):
                        rchar = int(line.split()[1])
        except OSError:
            pass
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return p.returncode, stderr, rchar, ru.ru_maxrss, timed_out


def snapshot(root, skip):
    """Every entry under root but skip (a folder), by lstat: type, size, mtime, mode, link target."""
    out = {}
    for d, dirs, files in os.walk(root):
        if os.path.abspath(d) == skip:
            dirs[:] = []
            continue
        for name in dirs + files:
            p = os.path.join(d, name)
            if os.path.abspath(p) == skip:
                continue
            try:
                st = os.lstat(p)
            except OSError:
                continue
            link = os.readlink(p) if stat.S_ISLNK(st.st_mode) else None
            out[p] = (stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, stat.S_IMODE(st.st_mode), link)
    return out


# ---- crafting -------------------------------------------------------------------------------------------

def sparse(path, size=SPARSE):
    with open(path, "wb") as f:
        f.truncate(size)


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def summary_of(run):
    with open(os.path.join(run, "summary.json")) as f:
        return json.load(f)


def set_summary(run, s):
    p = os.path.join(run, "summary.json")
    if os.path.islink(p) or os.path.exists(p):
        os.unlink(p)
    write(p, s if isinstance(s, str) else json.dumps(s))


def edit_summary(run, f):
    s = summary_of(run)
    f(s)
    set_summary(run, s)


def only(run, ext):
    """summary.json lists only the frames' .EXT files (the reader prefers .pvtp, .vtp, .ply, .csv)."""
    def f(s):
        for k, fr in enumerate(s["frames"]):
            fr["files"] = ["frames/particles_%05d.%s" % (fr["index"], ext)]
    edit_summary(run, f)


def frame(run, k, ext):
    return os.path.join(run, "frames", "particles_%05d.%s" % (k, ext))


def replace_frame(run, k, ext, data):
    p = frame(run, k, ext)
    os.unlink(p)
    if data is not None:
        write(p, data)
    return p


def vtp_appended(data):
    """Offset of the appended block's first byte (after '_')."""
    return data.index(b"_", data.index(b"<AppendedData")) + 1


def csv_edit(run, k, row, col, value):
    """Sets column col of data row `row` (0 = first particle) of frame k's .csv."""
    lines = read(frame(run, k, "csv")).decode().split("\n")
    header = lines[0].split(",")
    cells = lines[1 + row].split(",")
    cells[header.index(col)] = value
    lines[1 + row] = ",".join(cells)
    replace_frame(run, k, "csv", "\n".join(lines))


def pvtp(sources):
    pieces = "".join('    <Piece Source="%s"/>\n' % s for s in sources)
    return ('<?xml version="1.0"?>\n<VTKFile type="PPolyData" version="1.0" byte_order="LittleEndian" '
            'header_type="UInt64">\n  <PPolyData GhostLevel="0">\n    <PPointData>\n'
            '      <PDataArray type="Float32" Name="velocity" NumberOfComponents="3"/>\n'
            '      <PDataArray type="UInt32" Name="id" NumberOfComponents="1"/>\n    </PPointData>\n'
            '    <PPoints>\n      <PDataArray type="Float32" Name="Points" NumberOfComponents="3"/>\n    </PPoints>\n'
            + pieces + '  </PPolyData>\n</VTKFile>\n')


def as_pvtp(run, k, sources):
    """Frame k becomes frames/particles_K.pvtp listing sources (frame k's .vtp copied as piece _p0000)."""
    shutil.copy(frame(run, k, "vtp"), os.path.join(run, "frames", "particles_%05d_p0000.vtp" % k))
    write(frame(run, k, "pvtp"), pvtp(sources))


def scene_3d(model, extra_boundary="", radius=0.025):
    b = '{"shape": "box", "min": [-0.5, -0.5, -0.5], "max": [0.5, 0.5, 0.5]}'
    if model:
        b += ', {"shape": "mesh", "file": "%s", "solid": true%s}' % (model, extra_boundary)
    return json.loads('{"name": "h3", "dimension": 3, "method": "wcsph", "particle_radius": %g, "duration": 0.1,'
                      ' "output": {"fps": 30, "formats": ["vtk"]}, "boundaries": [%s],'
                      ' "fluids": [{"shape": "box", "min": [-0.4, 0.1, -0.1], "max": [-0.2, 0.3, 0.1]}]}' % (radius, b))


# ---- the cases --------------------------------------------------------------------------------------------
# Each: (name, source run "2d"/"3d"/None, spoil(case_dir, run) -> run_dir argument or None (the run),
#        expectation, options). Expectations:
#   ("refused", [needles])      exit 2, one line "eddy: error: ..." holding every needle
#   ("failed", [needles])       exit 1 or 2, one line holding every needle (outputs that cannot be written)
#   ("ok", [needles])           exit 0, no warning, the whitewater files written (needles: in stderr)
#   ("warned", [needles])       exit 0, the whitewater files written, one warning line holding every needle
#   ("refused_or_warned", [n])  either of the two
#   ("refused_or_ok", [n])      exit 2 as "refused", or exit 0 (needles then not required)
#   ("any", [n])                as "refused_or_ok", warnings allowed (a choice the code may make either way)
# Whatever the expectation: ended by itself, bounded reads and memory, nothing changed outside the run folder,
# and on exit 0 every whitewater particle written is finite.

CASES = []


def case(name, src, expect, needles=(), nobody=False, extra_args=()):
    def deco(fn):
        CASES.append(dict(name=name, src=src, spoil=fn, expect=expect, needles=list(needles), nobody=nobody,
                          args=list(extra_args)))
        return fn
    return deco


# The folder itself.
@case("control_2d", "2d", "ok", ["4 frame(s), 2D"])
def _(c, run):
    pass


@case("control_2d_making_whitewater", "2d", "ok", ["4 frame(s), 2D"], extra_args=MAKE)
def _(c, run):
    pass


@case("control_3d_with_model", "3d", "ok", ["3D"], extra_args=MAKE)
def _(c, run):
    pass


@case("folder_missing", None, "refused", ["nothing", "no such folder"])
def _(c, run):
    return os.path.join(c, "nothing")


@case("folder_is_a_file", None, "refused", ["afile", "no such folder"])
def _(c, run):
    write(os.path.join(c, "afile"), "x")
    return os.path.join(c, "afile")


@case("folder_is_a_link_to_dev_zero", None, "refused", ["zero_dir", "no such folder"])
def _(c, run):
    os.symlink("/dev/zero", os.path.join(c, "zero_dir"))
    return os.path.join(c, "zero_dir")


@case("folder_empty", None, "refused", ["empty", "no summary.json"])
def _(c, run):
    os.makedirs(os.path.join(c, "empty"))
    return os.path.join(c, "empty")


# summary.json as a file.
@case("summary_fifo", "2d", "refused", ["summary.json", "FIFO"])
def _(c, run):
    os.unlink(os.path.join(run, "summary.json"))
    os.mkfifo(os.path.join(run, "summary.json"))


@case("summary_link_to_dev_zero", "2d", "refused", ["summary.json", "character device"])
def _(c, run):
    os.unlink(os.path.join(run, "summary.json"))
    os.symlink("/dev/zero", os.path.join(run, "summary.json"))


@case("summary_sparse_100G", "2d", "refused", ["summary.json", BIG])
def _(c, run):
    os.unlink(os.path.join(run, "summary.json"))
    sparse(os.path.join(run, "summary.json"))


@case("summary_link_out_to_etc_passwd", "2d", "refused", ["summary.json", "not JSON"])
def _(c, run):
    os.unlink(os.path.join(run, "summary.json"))
    os.symlink("/etc/passwd", os.path.join(run, "summary.json"))


@case("summary_is_a_folder", "2d", "refused", ["summary.json", "folder"])
def _(c, run):
    os.unlink(os.path.join(run, "summary.json"))
    os.makedirs(os.path.join(run, "summary.json"))


@case("summary_empty", "2d", "refused", ["summary.json", "not JSON"])
def _(c, run):
    set_summary(run, "")


@case("summary_binary_garbage", "2d", "refused", ["summary.json", "not JSON"])
def _(c, run):
    set_summary(run, "")
    write(os.path.join(run, "summary.json"), bytes(range(256)) * 16)


@case("summary_a_list", "2d", "refused", ["summary.json", "not JSON"])
def _(c, run):
    set_summary(run, "[1, 2, 3]")


@case("summary_nested_1M_deep", "2d", "refused", ["summary.json"])
def _(c, run):
    set_summary(run, "[" * 1000000 + "]" * 1000000)


@case("summary_unreadable", "2d", "refused", ["summary.json", "permission denied"], nobody=True)
def _(c, run):
    os.chmod(os.path.join(run, "summary.json"), 0)


# summary.json's keys.
def key_case(name, expect, needles, f, extra_args=()):
    case(name, "2d", expect, needles, extra_args=extra_args)(lambda c, run: edit_summary(run, f))


key_case("key_dimension_missing", "refused", ["summary.json", "'dimension'"], lambda s: s.pop("dimension"))
key_case("key_dimension_text", "refused", ["summary.json", "'dimension'"], lambda s: s.update(dimension="2"))
key_case("key_dimension_4", "refused", ["summary.json", "'dimension'"], lambda s: s.update(dimension=4))
key_case("key_dimension_2.5", "refused", ["summary.json", "'dimension'"], lambda s: s.update(dimension=2.5))
key_case("key_dimension_3_over_2d_frames", "refused_or_warned", ["2D"], lambda s: s.update(dimension=3))
key_case("key_particle_radius_missing", "refused", ["particle_radius"], lambda s: s.pop("particle_radius"))
key_case("key_particle_radius_text", "refused", ["particle_radius"], lambda s: s.update(particle_radius="0.02"))
key_case("key_particle_radius_negative", "refused", ["particle_radius"], lambda s: s.update(particle_radius=-0.02))
key_case("key_particle_radius_1e300", "refused", ["particle_radius"], lambda s: s.update(particle_radius=1e300), MAKE)
key_case("key_particle_radius_1e-30", "refused_or_ok", ["particle_radius"], lambda s: s.update(particle_radius=1e-30), MAKE)
key_case("key_up_axis_x", "refused", ["summary.json", "up_axis"], lambda s: s.update(up_axis="x"))
key_case("key_frames_missing", "refused", ["summary.json", "'frames'"], lambda s: s.pop("frames"))
key_case("key_frames_object", "refused", ["summary.json", "'frames'"], lambda s: s.update(frames={"a": 1}))
key_case("key_frames_empty", "refused", ["summary.json", "'frames'"], lambda s: s.update(frames=[]))
key_case("key_frames_numbers", "refused", ["summary.json", "frames[0]"], lambda s: s.update(frames=[1, 2]))
key_case("key_frame_time_text", "refused", ["summary.json", "frames[1]"],
         lambda s: s["frames"][1].update(time="0.03"))
key_case("key_frame_times_backwards", "refused", ["summary.json", "frames[2].time"],
         lambda s: s["frames"][2].update(time=0.01))
key_case("key_frame_time_1e300", "refused_or_ok", ["summary.json", "frames[3].time"],
         lambda s: s["frames"][3].update(time=1e300), MAKE)
key_case("key_frame_files_text", "refused", ["summary.json", "frames[1]"],
         lambda s: s["frames"][1].update(files="frames/particles_00001.vtp"))
key_case("key_frame_files_none", "refused", ["summary.json", "frames[1].files"], lambda s: s["frames"][1].update(files=[]))
key_case("key_frame_file_absolute", "refused", ["summary.json", "frames[1].files"],
         lambda s: s["frames"][1].update(files=["/etc/passwd"]))
key_case("key_frame_file_dotdot", "refused", ["summary.json", "frames[1].files"],
         lambda s: s["frames"][1].update(files=["frames/../../outside/particles_00001.vtp"]))
key_case("key_frame_file_missing", "refused", ["particles_00009.vtp", "no such file"],
         lambda s: s["frames"][1].update(files=["frames/particles_00009.vtp"]))
key_case("key_frame_index_text", "refused", ["summary.json", "index"], lambda s: s["frames"][1].update(index="one"))
key_case("key_frame_index_1e20", "refused", ["summary.json", "index"], lambda s: s["frames"][1].update(index=1e20))
key_case("key_frame_index_2e40", "refused", ["summary.json", "index"], lambda s: s["frames"][2].update(index=2 ** 40))
key_case("key_frame_index_negative", "refused_or_ok", ["summary.json", "index"], lambda s: s["frames"][1].update(index=-7))
key_case("key_frames_all_empty", "ok", [],
         lambda s: [fr.update(particles=0, files=["frames/particles_%05d.vtp" % (90 + k)]) for k, fr in enumerate(s["frames"])])
key_case("key_scene_document_a_number", "warned", ["no scene_document"], lambda s: s.update(scene_document=5))
key_case("key_scene_document_and_file_missing", "warned", ["cannot be reloaded"],
         lambda s: [s.pop("scene_document"), s.pop("scene_file")])


# The scene summary.json names: outside the folder by design (beside the scene file), so only confined
# reads are asked for: never a FIFO or device, nothing unbounded.
@case("scene_file_dev_zero", "2d", "refused_or_warned", ["/dev/zero"])
def _(c, run):
    edit_summary(run, lambda s: [s.pop("scene_document"), s.update(scene_file="/dev/zero")])


@case("scene_file_fifo_outside", "2d", "refused_or_warned", ["scene.json"])
def _(c, run):
    os.makedirs(os.path.join(c, "outside"))
    os.mkfifo(os.path.join(c, "outside", "scene.json"))
    edit_summary(run, lambda s: [s.pop("scene_document"), s.update(scene_file=os.path.join(c, "outside", "scene.json"))])


@case("scene_file_sparse_100G", "2d", "refused_or_warned", ["huge.json"])
def _(c, run):
    sparse(os.path.join(c, "huge.json"))
    edit_summary(run, lambda s: [s.pop("scene_document"), s.update(scene_file=os.path.join(c, "huge.json"))])


@case("scene_file_relative_dotdot", "2d", "refused_or_warned", ["scene"])
def _(c, run):
    # Relative names resolve against the working folder (the case folder): a scene there, 1M deep.
    write(os.path.join(c, "outside", "scene.json"), "[" * 1000000 + "]" * 1000000)
    edit_summary(run, lambda s: [s.pop("scene_document"), s.update(scene_file="../" + os.path.basename(c) + "/outside/scene.json")])


@case("scene_model_fifo_absolute", "3d", "refused_or_warned", ["pipe.obj", "FIFO"])
def _(c, run):
    os.makedirs(os.path.join(c, "outside"))
    os.mkfifo(os.path.join(c, "outside", "pipe.obj"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d(os.path.join(c, "outside", "pipe.obj"))))


@case("scene_model_dev_zero", "3d", "refused_or_warned", ["/dev/zero"])
def _(c, run):
    edit_summary(run, lambda s: s.update(scene_document=scene_3d("/dev/zero")))


@case("scene_model_sparse_100G", "3d", "refused_or_warned", ["huge.stl"])
def _(c, run):
    sparse(os.path.join(c, "huge.stl"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d(os.path.join(c, "huge.stl"))))


@case("scene_model_sparse_100G_obj", "3d", "refused_or_warned", ["huge.obj"])
def _(c, run):
    # An OBJ has no counts in a header: a memory estimate that streams it to count lines reads 100 GB.
    sparse(os.path.join(c, "huge.obj"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d(os.path.join(c, "huge.obj"))))


@case("scene_model_dotdot_link_loop", "3d", "refused_or_warned", ["loop.obj"])
def _(c, run):
    # scene_file's folder is src3d (outside the run); the model goes up and into a loop of links.
    os.makedirs(os.path.join(c, "outside"))
    os.symlink(os.path.join(c, "outside", "b.obj"), os.path.join(c, "outside", "loop.obj"))
    os.symlink(os.path.join(c, "outside", "loop.obj"), os.path.join(c, "outside", "b.obj"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d("../" + os.path.basename(c) + "/outside/loop.obj")))


@case("scene_model_mtllib_fifo", "3d", "refused_or_warned", ["a.obj", "pipe.mtl"])
def _(c, run):
    write(os.path.join(c, "outside", "a.obj"), "mtllib pipe.mtl\n" + TETRA_OBJ)
    os.mkfifo(os.path.join(c, "outside", "pipe.mtl"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d(os.path.join(c, "outside", "a.obj"))))


@case("scene_model_link_in_run_to_dev_zero", "3d", "refused_or_warned", ["m.stl"])
def _(c, run):
    os.symlink("/dev/zero", os.path.join(run, "m.stl"))
    edit_summary(run, lambda s: s.update(scene_document=scene_3d(os.path.join(run, "m.stl"))))


@case("scene_fluid_file_sparse_100G", "2d", "refused_or_warned", ["huge.csv"])
def _(c, run):
    sparse(os.path.join(c, "huge.csv"))

    def f(s):
        s["scene_document"]["fluids"] = [{"shape": "file", "file": os.path.join(c, "huge.csv")}]
    edit_summary(run, f)


@case("scene_fluid_file_fifo", "2d", "refused_or_warned", ["pipe.csv", "FIFO"])
def _(c, run):
    os.mkfifo(os.path.join(c, "pipe.csv"))

    def f(s):
        s["scene_document"]["fluids"] = [{"shape": "file", "file": os.path.join(c, "pipe.csv")}]
    edit_summary(run, f)


@case("scene_model_radius_1e-9", "3d", "any", ["particle_radius"])
def _(c, run):
    # The scene's own radius: its model's walls at 1 nm (eddy run refuses it from its memory estimate).
    def f(s):
        s["scene_document"]["particle_radius"] = 1e-9
    edit_summary(run, f)


@case("scene_box_radius_1e-9", "2d", "any", ["particle_radius"])
def _(c, run):
    def f(s):
        s["scene_document"]["particle_radius"] = 1e-9
    edit_summary(run, f)


# Frames as files.
@case("frame_fifo", "2d", "refused", ["particles_00001.vtp", "FIFO"])
def _(c, run):
    replace_frame(run, 1, "vtp", None)
    os.mkfifo(frame(run, 1, "vtp"))


@case("frame_link_to_dev_zero", "2d", "refused", ["particles_00001.vtp", "symbolic link"])
def _(c, run):
    replace_frame(run, 1, "vtp", None)
    os.symlink("/dev/zero", frame(run, 1, "vtp"))


@case("frame_sparse_100G", "2d", "refused", ["particles_00001.vtp", BIG])
def _(c, run):
    replace_frame(run, 1, "vtp", None)
    sparse(frame(run, 1, "vtp"))


@case("frame_sparse_100G_csv", "2d", "refused", ["particles_00001.csv", BIG])
def _(c, run):
    only(run, "csv")
    replace_frame(run, 1, "csv", None)
    sparse(frame(run, 1, "csv"))


@case("frame_is_a_folder", "2d", "refused", ["particles_00001.vtp", "folder"])
def _(c, run):
    replace_frame(run, 1, "vtp", None)
    os.makedirs(frame(run, 1, "vtp"))


@case("frame_empty", "2d", "refused", ["particles_00001.vtp", "empty"])
def _(c, run):
    replace_frame(run, 1, "vtp", b"")


@case("frame_unreadable", "2d", "refused", ["particles_00001.vtp", "permission denied"], nobody=True)
def _(c, run):
    os.chmod(frame(run, 1, "vtp"), 0)


@case("frames_folder_unreadable", "2d", "refused", ["particles_00000.vtp", "permission denied"], nobody=True)
def _(c, run):
    os.chmod(os.path.join(run, "frames"), 0)


@case("frame_link_loop", "2d", "refused", ["particles_00001.vtp", "loop of symbolic links"])
def _(c, run):
    replace_frame(run, 1, "vtp", None)
    os.symlink(frame(run, 1, "vtp") + ".b", frame(run, 1, "vtp"))
    os.symlink(frame(run, 1, "vtp"), frame(run, 1, "vtp") + ".b")


# As a .pvtp's pieces: a frame may not lead out of the run folder (--allow-outside-references lets it).
@case("frame_link_out_of_the_folder", "2d", "refused", ["particles_00001.vtp", "symbolic link"])
def _(c, run):
    os.makedirs(os.path.join(c, "outside"))
    shutil.move(frame(run, 1, "vtp"), os.path.join(c, "outside", "real.vtp"))
    os.symlink(os.path.join(c, "outside", "real.vtp"), frame(run, 1, "vtp"))


# Frames' contents.
@case("frame_vtp_truncated", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = read(frame(run, 1, "vtp"))
    replace_frame(run, 1, "vtp", d[: len(d) // 2])


@case("frame_vtp_cut_in_header", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    replace_frame(run, 1, "vtp", read(frame(run, 1, "vtp"))[:300])


@case("frame_vtp_wrong_header", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = read(frame(run, 1, "vtp")).replace(b'type="PolyData"', b'type="ImageData"', 1)
    replace_frame(run, 1, "vtp", d)


@case("frame_vtp_not_xml", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    replace_frame(run, 1, "vtp", b"\x00\x01garbage" * 100)


@case("frame_vtp_points_count_1e9", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = read(frame(run, 1, "vtp")).replace(b'NumberOfPoints="100"', b'NumberOfPoints="1000000000"', 1)
    replace_frame(run, 1, "vtp", d)


@case("frame_vtp_points_count_50", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = read(frame(run, 1, "vtp")).replace(b'NumberOfPoints="100"', b'NumberOfPoints="50"', 1)
    replace_frame(run, 1, "vtp", d)


@case("frame_vtp_block_size_2e62", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = bytearray(read(frame(run, 1, "vtp")))
    at = vtp_appended(bytes(d))
    d[at:at + 8] = struct.pack("<Q", 1 << 62)
    replace_frame(run, 1, "vtp", bytes(d))


@case("frame_vtp_block_size_short", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = bytearray(read(frame(run, 1, "vtp")))
    at = vtp_appended(bytes(d))
    d[at:at + 8] = struct.pack("<Q", 12)
    replace_frame(run, 1, "vtp", bytes(d))


@case("frame_vtp_offset_far", "2d", "refused", ["particles_00001.vtp"])
def _(c, run):
    d = read(frame(run, 1, "vtp")).replace(b'offset="2824"', b'offset="9999999999999"', 1)
    replace_frame(run, 1, "vtp", d)


@case("frame_vtp_nan_position", "2d", "refused", ["particles_00001.vtp", "not finite"])
def _(c, run):
    d = bytearray(read(frame(run, 1, "vtp")))
    at = vtp_appended(bytes(d)) + 8
    d[at:at + 4] = struct.pack("<f", float("nan"))
    replace_frame(run, 1, "vtp", bytes(d))


@case("frame_vtp_no_velocity", "2d", "refused", ["particles_00001.vtp", "velocit"])
def _(c, run):
    d = read(frame(run, 1, "vtp")).replace(b'Name="velocity"', b'Name="speediness"', 1)
    replace_frame(run, 1, "vtp", d)


@case("frame_csv_nan_position", "2d", "refused", ["particles_00001.csv", "not finite"])
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "x", "nan")


@case("frame_csv_inf_velocity", "2d", "refused_or_ok", ["particles_00001.csv", "velocity"], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "vx", "inf")


@case("frame_csv_nan_velocity", "2d", "refused_or_ok", ["particles_00001.csv", "velocity"], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "vy", "nan")


@case("frame_csv_huge_velocity", "2d", "refused_or_ok", ["particles_00000.csv", "velocity"], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    for k in range(4):
        for row in range(0, 100, 3):
            csv_edit(run, k, row, "vx", "3e38")


@case("frame_csv_position_1e30", "2d", "refused_or_ok", ["particles_00001.csv"], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "x", "1e30")
    csv_edit(run, 1, 6, "x", "-1e30")


@case("frame_csv_position_3e38", "2d", "refused_or_ok", ["particles_00001.csv"], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "x", "3.4e38")
    csv_edit(run, 1, 6, "y", "-3.4e38")


@case("frame_csv_duplicate_id", "2d", "refused", ["particles_00001.csv", "id"])
def _(c, run):
    only(run, "csv")
    csv_edit(run, 1, 5, "id", "0")


@case("frame_csv_short_row", "2d", "refused", ["particles_00001.csv"])
def _(c, run):
    only(run, "csv")
    lines = read(frame(run, 1, "csv")).decode().split("\n")
    lines[7] = ",".join(lines[7].split(",")[:3])
    replace_frame(run, 1, "csv", "\n".join(lines))


@case("frame_csv_header_only", "2d", "refused", ["particles_00001.csv", "no particles"])
def _(c, run):
    only(run, "csv")
    replace_frame(run, 1, "csv", read(frame(run, 1, "csv")).split(b"\n")[0] + b"\n")


@case("frame_csv_one_long_line", "2d", "refused", ["particles_00001.csv"])
def _(c, run):
    only(run, "csv")
    replace_frame(run, 1, "csv", b"id,x,y,vx,vy\n" + b"1" * (8 << 20))


@case("frame_csv_fewer_particles", "2d", "ok", [], extra_args=MAKE)
def _(c, run):
    # 50 of the 100 particles left by frame 2 (matched by id): a valid run, e.g. an outflow.
    only(run, "csv")
    lines = read(frame(run, 2, "csv")).decode().split("\n")
    replace_frame(run, 2, "csv", "\n".join(lines[:51]) + "\n")


@case("frame_csv_other_ids", "2d", "ok", [], extra_args=MAKE)
def _(c, run):
    only(run, "csv")
    lines = read(frame(run, 2, "csv")).decode().strip().split("\n")
    out = [lines[0]] + ["%d,%s" % (1000 + k, l.split(",", 1)[1]) for k, l in enumerate(lines[1:])]
    replace_frame(run, 2, "csv", "\n".join(out) + "\n")


@case("frame_csv_other_ids_time_1e300", "2d", "refused_or_ok", ["summary.json", "time"], extra_args=MAKE)
def _(c, run):
    # A particle gone by the next frame carries on with its velocity for the whole span.
    only(run, "csv")
    lines = read(frame(run, 3, "csv")).decode().strip().split("\n")
    out = [lines[0]] + ["%d,%s" % (1000 + k, l.split(",", 1)[1]) for k, l in enumerate(lines[1:])]
    replace_frame(run, 3, "csv", "\n".join(out) + "\n")
    edit_summary(run, lambda s: s["frames"][3].update(time=1e300))


@case("frame_ply_count_lies", "2d", "refused", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    d = read(frame(run, 1, "ply")).replace(b"element vertex 100\n", b"element vertex 1000\n", 1)
    replace_frame(run, 1, "ply", d)


@case("frame_ply_count_4e9", "2d", "refused", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    d = read(frame(run, 1, "ply")).replace(b"element vertex 100\n", b"element vertex 4000000000\n", 1)
    replace_frame(run, 1, "ply", d)


@case("frame_ply_truncated", "2d", "refused", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    d = read(frame(run, 1, "ply"))
    replace_frame(run, 1, "ply", d[: len(d) - 10])


@case("frame_ply_trailing_bytes", "2d", "refused_or_ok", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    replace_frame(run, 1, "ply", read(frame(run, 1, "ply")) + b"\x00" * 1000)


@case("frame_ply_wrong_magic", "2d", "refused", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    replace_frame(run, 1, "ply", b"plx" + read(frame(run, 1, "ply"))[3:])


@case("frame_ply_no_end_header", "2d", "refused", ["particles_00001.ply"])
def _(c, run):
    only(run, "ply")
    replace_frame(run, 1, "ply", b"ply\nformat binary_little_endian 1.0\nelement vertex 100\n" + b"property float x\n" * 100000)


@case("frame_ply_nan_position", "2d", "refused", ["particles_00001.ply", "not finite"])
def _(c, run):
    only(run, "ply")
    d = bytearray(read(frame(run, 1, "ply")))
    at = d.index(b"end_header\n") + len(b"end_header\n")
    d[at:at + 4] = struct.pack("<f", float("nan"))
    replace_frame(run, 1, "ply", bytes(d))


@case("frame_2d_holds_3d", "2d", "refused_or_ok", ["particles_00001.csv"])
def _(c, run):
    only(run, "csv")
    lines = read(frame(run, 1, "csv")).decode().strip().split("\n")
    out = [lines[0] + ",z"] + [l + ",0.5" for l in lines[1:]]
    replace_frame(run, 1, "csv", "\n".join(out) + "\n")


# .pvtp frames and their pieces.
@case("pvtp_control", "2d", "ok", [])
def _(c, run):
    as_pvtp(run, 1, ["particles_00001_p0000.vtp"])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_piece_absolute", "2d", "refused", ["particles_00001.pvtp", "absolute path"])
def _(c, run):
    write(os.path.join(c, "outside", "p.vtp"), read(frame(run, 1, "vtp")))
    as_pvtp(run, 1, [os.path.join(c, "outside", "p.vtp")])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_piece_dotdot", "2d", "refused", ["particles_00001.pvtp", "'..'"])
def _(c, run):
    write(os.path.join(c, "outside", "p.vtp"), read(frame(run, 1, "vtp")))
    as_pvtp(run, 1, ["../../outside/p.vtp"])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_piece_link_out", "2d", "refused", ["particles_00001.pvtp", "symbolic link"])
def _(c, run):
    write(os.path.join(c, "outside", "p.vtp"), read(frame(run, 1, "vtp")))
    os.symlink(os.path.join(c, "outside", "p.vtp"), os.path.join(run, "frames", "out.vtp"))
    as_pvtp(run, 1, ["out.vtp"])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_piece_fifo", "2d", "refused", ["pipe.vtp", "FIFO"])
def _(c, run):
    os.mkfifo(os.path.join(run, "frames", "pipe.vtp"))
    as_pvtp(run, 1, ["particles_00001_p0000.vtp", "pipe.vtp"])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_piece_sparse_100G", "2d", "refused", ["big.vtp", BIG])
def _(c, run):
    sparse(os.path.join(run, "frames", "big.vtp"))
    as_pvtp(run, 1, ["particles_00001_p0000.vtp", "big.vtp"])
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


@case("pvtp_100k_pieces_of_one_file", "2d", "refused_or_ok", ["particles_00001.pvtp"])
def _(c, run):
    # Each piece 6 kB: 600 MB if read 100,000 times (duplicate ids are refused after the first two).
    as_pvtp(run, 1, ["particles_00001_p0000.vtp"] * 100000)
    edit_summary(run, lambda s: s["frames"][1].update(files=["frames/particles_00001.pvtp"]))


# Outputs: nothing may be written outside the run folder.
# As eddy run's: frames/ is eddy's own, a symbolic link there would send the whitewater files elsewhere.
@case("frames_folder_link_out", "2d", "refused", ["frames", "symbolic link"])
def _(c, run):
    shutil.move(os.path.join(run, "frames"), os.path.join(c, "outside_frames"))
    os.symlink(os.path.join(c, "outside_frames"), os.path.join(run, "frames"))


@case("output_links_planted", "2d", "ok", [])
def _(c, run):
    write(os.path.join(c, "outside", "victim.txt"), "keep me\n")
    for name in ("whitewater.csv", "whitewater.pvd", "frames/whitewater_00000.vtp", "frames/whitewater_00001.ply"):
        os.symlink(os.path.join(c, "outside", "victim.txt"), os.path.join(run, name))


@case("output_name_is_a_folder", "2d", "failed", ["whitewater_00001.vtp"])
def _(c, run):
    os.makedirs(os.path.join(run, "frames", "whitewater_00001.vtp", "x"))


@case("output_folder_read_only", "2d", "failed", ["whitewater"], nobody=True)
def _(c, run):
    os.chmod(os.path.join(run, "frames"), 0o555)


# ---- driver ---------------------------------------------------------------------------------------------

def remove(path):
    """rmtree after giving back every folder's permissions (cases take some away)."""
    def walk(d):
        try:
            os.chmod(d, 0o755)
            names = os.listdir(d)
        except OSError:
            return
        for x in names:
            p = os.path.join(d, x)
            if os.path.isdir(p) and not os.path.islink(p):
                walk(p)
    walk(path)
    shutil.rmtree(path, ignore_errors=True)


def make_sources(tmp):
    """The two runs to craft from."""
    src = {}
    out = os.path.join(tmp, "src2d")
    cmd = [EDDY, "run", "square_2d", "--set", "particle_radius=0.02", "--until", "0.1", "--fps", "30", "--format",
           "vtk,csv,ply", "--quiet", "--threads", "1", "-o", out]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        fail(" ".join(cmd) + ": " + res.stderr)
    src["2d"] = out
    d3 = os.path.join(tmp, "scene3d")
    write(os.path.join(d3, "m", "t.obj"), TETRA_OBJ)
    write(os.path.join(d3, "scene.json"), json.dumps(scene_3d("m/t.obj")))
    out = os.path.join(tmp, "src3d")
    cmd = [EDDY, "run", os.path.join(d3, "scene.json"), "--until", "0.07", "--fps", "30", "--quiet", "--threads", "1",
           "-o", out]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        fail(" ".join(cmd) + ": " + res.stderr)
    src["3d"] = out
    return src


def check_outputs(run):
    """Every frames/whitewater_NNNNN.ply whole and finite (never garbage written from garbage read)."""
    rec = np.dtype([("x", "<f4", 6), ("lifetime", "<f4"), ("type", "u1"), ("id", "<u4")])
    folder = os.path.join(run, "frames")
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if not (name.startswith("whitewater_") and name.endswith(".ply")):
            continue
        data = read(os.path.join(folder, name))
        at = data.find(b"end_header\n")
        if at < 0:
            return name + ": no end_header"
        n = int(next(l.split()[2] for l in data[:at].decode().split("\n") if l.startswith("element vertex")))
        body = data[at + len(b"end_header\n"):]
        if len(body) != n * rec.itemsize:
            return "%s: %d bytes for %d particles" % (name, len(body), n)
        a = np.frombuffer(body, dtype=rec)
        bad = int((~np.isfinite(a["x"])).any(axis=1).sum() + (~np.isfinite(a["lifetime"])).sum())
        if bad:
            return "%s: %d of %d particles not finite (position, velocity or lifetime)" % (name, bad, n)
    return ""


def check(cs, code, err, run_dir):
    """What is wrong with the outcome, or ''."""
    lines = [l for l in err.split("\n") if l.strip()]
    expect, needles = cs["expect"], cs["needles"]
    warnings = [l for l in lines if l.startswith("eddy: warning:")]
    written = os.path.isfile(os.path.join(run_dir, "whitewater.csv")) if os.path.isdir(run_dir) else False

    def refused():
        if code != 2:
            return "exit %d, expected 2" % code
        if len(lines) != 1 or not lines[0].startswith("eddy: error: "):
            return "expected one line 'eddy: error: ...', got %d lines" % len(lines)
        missing = [n for n in needles if n not in lines[0]]
        return "'%s' not in the message" % "', '".join(missing) if missing else ""

    def ok(need_warning):
        if code != 0:
            return "exit %d, expected 0" % code
        if not written:
            return "no whitewater.csv in the run folder"
        if need_warning:
            hits = [w for w in warnings if all(n in w for n in needles)]
            if len(hits) != 1:
                return "expected one warning holding '%s', got %s" % ("', '".join(needles), warnings)
            return ""
        if warnings:
            return "unexpected warnings %s" % warnings
        missing = [n for n in needles if n not in err]
        return "'%s' not in stderr" % "', '".join(missing) if missing else ""

    if expect == "refused":
        return refused()
    if expect == "failed":
        if code not in (1, 2):
            return "exit %d, expected 1 or 2" % code
        if len(lines) != 1 or not lines[0].startswith("eddy: error: "):
            return "expected one line 'eddy: error: ...', got %d lines" % len(lines)
        missing = [n for n in needles if n not in lines[0]]
        return "'%s' not in the message" % "', '".join(missing) if missing else ""
    if expect == "ok":
        return ok(False)
    if expect == "warned":
        return ok(True)
    if expect == "refused_or_warned":
        return refused() if code != 0 else ok(True)
    if expect == "refused_or_ok":
        if code != 0:
            return refused()
        return "no whitewater.csv in the run folder" if not written else ""
    if expect == "any":
        if code != 0:
            return refused()
        return "no whitewater.csv in the run folder" if not written else ""
    return "unknown expectation " + expect


def main():
    if len(sys.argv) != 2:
        fail("usage: whitewater_hostile_test.py EDDY_CLI")
    if not os.access(EDDY, os.X_OK):
        fail(EDDY + " is not an executable")
    only_cases = os.environ.get("WW_HOSTILE_CASES", "").split(",") if os.environ.get("WW_HOSTILE_CASES") else None
    tmp = os.path.realpath(tempfile.mkdtemp(prefix="eddy_ww_hostile_"))
    root = os.geteuid() == 0
    can_drop = root and shutil.which("setpriv") is not None
    failures = []
    try:
        os.chmod(tmp, 0o755)  # user nobody walks in for the unreadable cases
        src = make_sources(tmp)
        for n, cs in enumerate(CASES):
            if only_cases and cs["name"] not in only_cases:
                continue
            if cs["nobody"] and root and not can_drop:
                print("files.whitewater_hostile: %-40s skipped: root without setpriv cannot be refused a file" % cs["name"])
                continue
            c = os.path.join(tmp, "case_%03d" % n)
            os.makedirs(c)
            run = os.path.join(c, "run")
            if cs["src"]:
                shutil.copytree(src[cs["src"]], run, symlinks=True)
                for f in ("whitewater.csv", "whitewater.pvd"):
                    if os.path.exists(os.path.join(run, f)):
                        os.unlink(os.path.join(run, f))
            arg = cs["spoil"](c, run) or run
            if cs["nobody"] and root:
                for d, dirs, files in os.walk(c):
                    for x in dirs:
                        p = os.path.join(d, x)
                        if not os.path.islink(p) and stat.S_IMODE(os.stat(p).st_mode) == 0o755:
                            os.chmod(p, 0o777)
                os.chmod(c, 0o777)
                if os.path.isdir(run) and stat.S_IMODE(os.stat(run).st_mode) == 0o755:
                    os.chmod(run, 0o777)
            before = snapshot(tmp, os.path.abspath(run))
            code, err, rchar, rss_kb, timed_out = run_timed([EDDY, "whitewater", arg, "--threads", "1"] + cs["args"],
                                                             c, as_nobody=cs["nobody"] and root)
            after = snapshot(tmp, os.path.abspath(run))
            problems = []
            if timed_out:
                problems.append("did not end within %d s (killed)" % TIMEOUT_S)
            elif code < 0:
                problems.append("killed by signal %d" % -code)
            else:
                why = check(cs, code, err, run)
                if why:
                    problems.append(why)
                if code == 0:
                    why = check_outputs(run)
                    if why:
                        problems.append(why)
            if rchar > MAX_READ:
                problems.append("read %d bytes (more than %d)" % (rchar, MAX_READ))
            if rss_kb > MAX_RSS_KB:
                problems.append("peak memory %d kB (more than %d)" % (rss_kb, MAX_RSS_KB))
            changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
            if changed:
                problems.append("changed outside the run folder: " + ", ".join(os.path.relpath(p, tmp) for p in changed[:5]))
            shown = " | ".join(l for l in err.split("\n") if l.strip()).replace(tmp + "/", "")
            print("files.whitewater_hostile: %-40s exit %4d  read %9d B  rss %7d kB  %s%s" % (
                cs["name"], code, rchar, rss_kb, shown[:400], ("  <-- " + "; ".join(problems)) if problems else ""))
            sys.stdout.flush()
            if problems:
                failures.append("%s: %s" % (cs["name"], "; ".join(problems)))
            # Sparse files and FIFOs go at once: nothing of a case is needed by the next.
            remove(c)
    finally:
        remove(tmp)
    if failures:
        fail("%d case(s):\n  " % len(failures) + "\n  ".join(failures))
    print("files.whitewater_hostile: all %d cases passed" % len(CASES))


main()
