"""README.md's "Validation" table against the figures the tests measured (issue 45).

    /usr/bin/python3 readme_figures_test.py README.md FIGURES_DIR
        checks the table, one line per check; exit code 1 on any failure
    /usr/bin/python3 readme_figures_test.py --tests
        prints the ctest names of the tests that report figures, ';'-separated (for DEPENDS)

The tests write each figure they measure to FIGURES_DIR/KEY (tests/support/figures.hpp, report_figure, when
EDDY_FIGURES_DIR is set; ctest sets it). ROWS below says, for each row of the table (known by the start of its
first cell), which figures its result cell quotes and how they are written there; the written text must be in
the cell, in the order ROWS lists them. A row whose result cell has a digit must be in ROWS or in NO_FIGURES,
and every row's third cell must hold a `ctest -R REGEX` that selects each test reporting one of its figures.
Standard library only.
"""
import math
import os
import re
import sys


# ---- Figure specs: what value a check reads, and how the README writes it ------------------------------------

class Key:
    """One figure file."""

    def __init__(self, key):
        self.keys = [key]

    def value(self, values):
        return values[self.keys[0]]

    def describe(self):
        return self.keys[0]


class Agg:
    """min or max over several figure files, of the values or of their absolute values."""

    def __init__(self, how, keys, absolute=False):
        self.how, self.keys, self.absolute = how, list(keys), absolute

    def value(self, values):
        v = [abs(values[k]) if self.absolute else values[k] for k in self.keys]
        return min(v) if self.how == "min" else max(v)

    def describe(self):
        return "%s%s %s" % (self.how, "|.|" if self.absolute else "", brief(self.keys))


class Fmt:
    """str.format spec, applied to value * scale: Fmt('{:+.1f}%') writes 6.31 as '+6.3%'."""

    def __init__(self, spec, scale=1.0):
        self.spec, self.scale = spec, scale

    def text(self, value):
        return self.spec.format(value * self.scale), None


class UpTo:
    """An upper bound the README states ('kept to 2e-8'): the text must be there and |value| at most it."""

    def __init__(self, bound_text):
        self.bound_text = bound_text

    def text(self, value):
        if abs(value) <= float(self.bound_text):
            return self.bound_text, None
        return self.bound_text, "measured %.3g, above the README's %s" % (value, self.bound_text)


class Range:
    """'lo SEP hi' over several figure files ('0.3-1.5%', '+4.5..+7.3%'); one number when both read the same."""

    def __init__(self, keys, lo_fmt, hi_fmt, sep="-", absolute=False, scale=1.0):
        self.lo = Agg("min", keys, absolute)
        self.hi = Agg("max", keys, absolute)
        self.keys = list(keys)
        self.lo_fmt, self.hi_fmt, self.sep, self.scale = lo_fmt, hi_fmt, sep, scale

    def value(self, values):
        return (self.lo.value(values), self.hi.value(values))

    def describe(self):
        return "range%s %s" % ("|.|" if self.lo.absolute else "", brief(self.keys))

    def text(self, value):
        lo, hi = value[0] * self.scale, value[1] * self.scale
        if self.hi_fmt.format(lo) == self.hi_fmt.format(hi):
            return self.hi_fmt.format(hi), None
        return self.lo_fmt.format(lo) + self.sep + self.hi_fmt.format(hi), None


def keys(pattern, *parts):
    return [pattern % p for p in parts]


def brief(names):
    """'a.b_{1,2}c' for ['a.b_1c', 'a.b_2c']."""
    if len(names) == 1:
        return names[0]
    head = os.path.commonprefix(names)
    tail = os.path.commonprefix([n[len(head):][::-1] for n in names])[::-1]
    tail = tail[min([tail.find(c) for c in "._" if c in tail], default=len(tail)):]  # from a separator on
    return "%s{%s}%s" % (head, ",".join(n[len(head):len(n) - len(tail)] for n in names), tail)


# ---- Which test writes which figure (ctest names: gtest_discover_tests' Suite.Test) -------------------------

TESTS = {
    "wcsph.hydrostatic_2d.": "WcsphValidation.HydrostaticPressure2D",
    "wcsph.hydrostatic_3d.": "WcsphValidation.HydrostaticGradient3D",
    "wcsph.tank_at_rest.": "WcsphValidation.TankAtRestKeepsHydrostaticPressureInEveryFrame2D",
    "wcsph.dam_break_2d.": "WcsphValidation.DamBreakFrontAgainstExperiments2D",
    "pbf.settled_tank.": "PbfValidation.SettledTankKeepsDensityAndWalls2D",
    "pbf.dam_break_2d.": "PbfValidation.DamBreakFrontMartinMoyce2D",
    "dfsph.tank_at_rest.": "DfsphValidation.TankAtRestHydrostatic2D",
    "dfsph.dam_break_2d.": "DfsphValidation.DamBreakFrontAgainstMartinMoyce2D",
    "dfsph.density_error_max.": "DfsphValidation.DensityErrorMaxKeepsEveryStepAtTheTarget2D",
    "dfsph.shear_wave.": "DfsphViscosity.ShearWaveDecaysAtTheAnalyticRate2D",
    "clavet.free_blob_2d_parallel.": "ClavetValidation.FreeBlobRelaxesToADiscParallel2D",
    "clavet.free_blob_2d_sequential.": "ClavetValidation.FreeBlobRelaxesToADiscSequential2D",
    "clavet.free_blob_3d_parallel.": "ClavetValidation.FreeBlobRelaxesToASphere3D",
    "clavet.springs.": "ClavetValidation.SpringsMakeABlobBounce",
    "shallow.ritter.": "ShallowWaterValidation.RitterDryDamBreak",
    "shallow.stoker.": "ShallowWaterValidation.StokerWetDamBreak",
    "shallow.closed_basin.": "ShallowWaterValidation.VolumeIsKeptInAClosedBasin",
    "shallow.river.": "ShallowWaterValidation.SourcesAndOpenBordersBalanceTheVolume",
    "shallow.small_wave.": "ShallowWaterValidation.SmallWaveTravelsAtSqrtGH",
    "geometry.mesh_box_dam_break.": "GeometryValidation.MeshBoxTankGivesTheAnalyticBoxDamBreakFrontWithin2Percent",
    "geometry.flat_mesh_floor.": "GeometryWalls.FlatMeshWallGivesTheAnalyticBoxWallsDensityWithin1Percent",
    "geometry.mesh_sphere_fill.": "GeometryScene.MeshSphereIsFilledWithItsVolumeOverTheLatticeCell",
    "geometry.piston.": "GeometryValidation.PistonWaveReachesTheFarWall",
    "geometry.paddle.": "GeometryValidation.RotatingMeshPaddleRaisesTheAngularMomentum",
    "surface.sdf_plane.": "SurfaceValidation.AnalyticSignedDistance3D",
    "surface.sdf_sphere.": "SurfaceValidation.AnalyticSignedDistance3D",
    "surface.sdf_torus.": "SurfaceValidation.AnalyticSignedDistance3D",
    "surface.sdf_line.": "SurfaceValidation.AnalyticSignedDistance2D",
    "surface.sdf_circle.": "SurfaceValidation.AnalyticSignedDistance2D",
    "surface.sdf_annulus.": "SurfaceValidation.AnalyticSignedDistance2D",
    "surface.lattice_ball.": "SurfaceValidation.LatticeSphereGivesClosedManifoldSphere",
    "surface.openvdb.": "SurfaceValidation.AgreesWithOpenVdbFogToSdf",
    "surface.anisotropic_tank.": "SurfaceAnisotropic.TankAtRestSurfaceIsFlat",
    "surface.anisotropic_ball.": "SurfaceAnisotropic.BallKeepsItsVolume",
    "bodies.heave_dfsph.": 'Bodies/HeaveDecay.PeriodAndDecayMeetLinearTheory/dfsph  # GetParam() = "dfsph"',  # a parametrized test's ctest name
    "bodies.heave_wcsph.": 'Bodies/HeaveDecay.PeriodAndDecayMeetLinearTheory/wcsph  # GetParam() = "wcsph"',  # a parametrized test's ctest name
    "bodies.heave_pbf.": 'Bodies/HeaveDecay.PeriodAndDecayMeetLinearTheory/pbf  # GetParam() = "pbf"',  # a parametrized test's ctest name
}


def test_of(key):
    best = max((p for p in TESTS if key.startswith(p)), key=len, default=None)
    return TESTS[best] if best else None


# ---- The table: row (start of its first cell) -> [(figure, how the README writes it)], in the cell's order ---

WCSPH_MM = "wcsph.dam_break_2d.front_percent_t%d"
DFSPH_DAM = "dfsph.dam_break_2d.front_percent_t%d"
SDF = ("plane", "sphere", "torus", "line", "circle", "annulus")

ROWS = {
    "2D hydrostatic tank": [
        (Range(keys("wcsph.hydrostatic_2d.p_percent_%dcm", 5, 10, 15, 20, 25), "{:.1f}", "{:.1f}%", absolute=True),
         None),
    ],
    "3D hydrostatic tank": [(Key("wcsph.hydrostatic_3d.dpdy_percent"), Fmt("{:.2f}%"))],
    "2D dam break (a = 0.1 m": [(Key(WCSPH_MM % t), Fmt("{:+.1f}%")) for t in (1602, 2283, 2950, 849, 1212)],
    "the same front against Koshizuka & Oka": [
        (Range(keys(WCSPH_MM, 769, 1153, 1537), "{:+.1f}", "{:+.1f}%", sep=".."), None),
    ],
    "WCSPH: the issue-11 tank at rest": [
        (Key("wcsph.tank_at_rest.worst_percent"), Fmt("{:.1f}%")),
        (Key("wcsph.tank_at_rest.former_defaults_worst_percent"), Fmt("{:.0f}%")),
    ],
    "PBF: settled tank": [(Key("pbf.settled_tank.mean_compression_percent"), Fmt("{:.2f}%"))],
    "DFSPH: the same 24 cm tank": [
        (Key("dfsph.tank_at_rest.worst_early_percent"), Fmt("{:.1f}%")),
        (Key("dfsph.tank_at_rest.worst_late_percent"), Fmt("{:.1f}%")),
        (Key("dfsph.tank_at_rest.worst_step_compression_over_target"), Fmt("{:.3f}x")),
        (Key("dfsph.tank_at_rest.cold_start_compression_over_target"), Fmt("{:.2f}x")),
    ],
    "DFSPH: dam-break front against Martin & Moyce": [
        (Key(DFSPH_DAM % 1212), Fmt("{:+.0f}")),
        (Key(DFSPH_DAM % 1602), Fmt("{:+.0f}")),
        (Key(DFSPH_DAM % 2283), Fmt("{:+.0f}")),
        (Key(DFSPH_DAM % 2950), Fmt("{:+.0f}%")),
        (Agg("max", keys("dfsph.dam_break_2d.vs_wcsph_percent_t%d", 1212, 1602, 2283, 2950), absolute=True),
         Fmt("{:.1f}%")),
        (Key("dfsph.dam_break_2d.worst_step_compression_over_target"), Fmt("{:.2f}x")),
        (Key("dfsph.density_error_max.worst_step_compression_over_target"), Fmt("{:.3f}x")),
    ],
    "DFSPH implicit viscosity (Weiler et al. 2018)": [
        (Key("dfsph.shear_wave.amplitude_percent_100ms"), Fmt("{:+.1f}")),
        (Key("dfsph.shear_wave.amplitude_percent_200ms"), Fmt("{:+.1f}")),
        (Key("dfsph.shear_wave.amplitude_percent_300ms"), Fmt("{:+.1f}%")),
    ],
    "bodies: free heave decay of a half-immersed cylinder": [
        (Key("bodies.heave_dfsph.period_percent"), Fmt("{:+.1f}%")),
        (Key("bodies.heave_dfsph.decay_ratio"), Fmt("{:.2f}")),
        (Key("bodies.heave_wcsph.period_percent"), Fmt("{:+.1f}%")),
        (Key("bodies.heave_pbf.period_percent"), Fmt("{:+.0f}%")),
    ],
    "PBF: dam-break front against Martin & Moyce": [
        (Key("pbf.dam_break_2d.front_percent_t1602"), Fmt("{:+.1f}")),
        (Key("pbf.dam_break_2d.front_percent_t2283"), Fmt("{:+.1f}")),
        (Key("pbf.dam_break_2d.front_percent_t2950"), Fmt("{:+.1f}%")),
    ],
    "Clavet: relaxation displacements summed over a step": [
        (Agg("max", keys("clavet.free_blob_%s.displacement_sum_ratio", "2d_parallel", "2d_sequential", "3d_parallel"),
             absolute=True), UpTo("1e-8")),
    ],
    "Clavet: a free 3:1 block": [
        (Range(keys("clavet.free_blob_%s.aspect_ratio", "2d_parallel", "2d_sequential", "3d_parallel"),
               "{:.2f}", "{:.2f}"), None),
    ],
    "Clavet: a blob dropped with and without springs": [
        (Key("clavet.springs.rebound_with_springs_m"), Fmt("{:.3f} m")),
        (Key("clavet.springs.rebound_without_springs_m"), Fmt("{:.3f} m")),
    ],
    "Shallow water: dam break on a dry bed": [
        (Key("shallow.ritter.l1_percent_conservative"), Fmt("{:.2f}%")),
        (Range(keys("shallow.ritter.l1_percent_%s", "semi_lagrangian", "upwind"), "{:.1f}", "{:.1f}%"), None),
    ],
    "Shallow water: dam break on a wet bed": [
        (Key("shallow.stoker.conservative.plateau_m"), Fmt("{:.4f} m")),
        (Key("shallow.stoker.plateau_exact_m"), Fmt("{:.4f}")),
        (Key("shallow.stoker.conservative.shock_m"), Fmt("{:.3f} m")),
        (Key("shallow.stoker.shock_exact_m"), Fmt("{:.3f}")),
        (Key("shallow.stoker.semi_lagrangian.plateau_percent"), Fmt("{:+.1f}%")),
        (Key("shallow.stoker.semi_lagrangian.shock_behind_m"), Fmt("{:.2f} m")),
    ],
    "Shallow water: closed basin": [
        (Agg("max", keys("shallow.closed_basin.volume_change_relative_%s", "conservative", "semi_lagrangian", "upwind"),
             absolute=True), UpTo("2.1e-8")),
        (Key("shallow.river.volume_balance_relative"), UpTo("1e-7")),
    ],
    "Shallow water: a 1 mm wave": [
        (Key("shallow.small_wave.speed_m_s"), Fmt("{:.4f} m/s")),
        (Key("shallow.small_wave.sqrt_gh_m_s"), Fmt("{:.4f}")),
    ],
    "geometry: a dam break in a mesh box tank": [
        (Range(keys("geometry.mesh_box_dam_break.front_vs_box_percent_t%d", 1212, 1602, 2283, 2950),
               "{:+.1f}", "{:+.1f}%", sep=".."), None),
    ],
    "geometry: a flat mesh floor": [(Key("geometry.flat_mesh_floor.density_percent_of_box"), Fmt("{:.1f}%"))],
    "geometry: a mesh sphere of R = 20 r filled": [(Key("geometry.mesh_sphere_fill.count_percent"), Fmt("{:+.1f}%"))],
    "geometry: a keyframed piston": [
        (Key("geometry.piston.crest_mm"), Fmt("{:.0f} mm")),
        (Key("geometry.piston.crest_time_s"), Fmt("t = {:.1f} s")),
        (Range(keys("geometry.paddle.angular_momentum_m2_s_%s", "wcsph", "pbf"), "{:.1f}", "{:.1f}e-3", scale=1e3),
         None),
    ],
    "surface: signed distance": [
        (Range(["surface.sdf_%s.max_error_voxel" % s for s in SDF], "{:.2f}", "{:.2f} voxel"), None),
        (Range(["surface.sdf_%s.grad_ok_percent" % s for s in SDF], "{:.0f}", "{:.0f}%"), None),
    ],
    "surface: lattice ball of radius R = 15.5 r": [
        (Key("surface.lattice_ball.euler"), Fmt("Euler characteristic {:.0f}")),
        (Key("surface.lattice_ball.volume_ratio"), Fmt("{:.3f}")),
        (Key("surface.lattice_ball.farthest_vertex_voxel"), Fmt("{:.2f} voxel")),
    ],
    "surface: against OpenVDB": [
        (Key("surface.openvdb.mean_difference_voxel"), Fmt("{:.3f} voxel")),
        (Key("surface.openvdb.max_difference_voxel"), Fmt("max {:.2f}")),
    ],
    "surface, anisotropic kernels: DFSPH tank at rest": [
        (Key("surface.anisotropic_tank.rms_r"), Fmt("{:.3f} r")),
        (Key("surface.anisotropic_tank.isotropic_rms_r"), Fmt("{:.3f} r")),
    ],
    "surface, anisotropic kernels: lattice balls": [
        (Range(keys("surface.anisotropic_ball.r%d_jitter%d.volume_ratio",
                    (120, 0), (120, 3), (155, 0), (155, 3), (200, 0), (200, 3)), "{:.3f}", "{:.3f}"), None),
    ],
}

# Rows that quote no measured figure: their numbers are the tests' own bounds, or there are none.
NO_FIGURES = {
    "2D and 3D dam breaks and the rotating stirrer": "none leak; the closest approach is printed, not quoted",
    "no gravity, no walls: total momentum": "1e-5 is the test's bound",
    "same scene on 1 and 2 threads": "bit-identical",
    "DFSPH implicit viscosity: a ball": "1e-5, 1e-3 and 1% are the test's bounds",
    "same particles stored in another order": "bit-identical",
    "WCSPH, PBF, Clavet, DFSPH (and its viscosity) dam breaks": "bit-identical (mpirun)",
    "Shallow water: lake at rest": "'exactly' is not measured: the test bounds velocity and surface by 1e-6",
    "geometry: dam break against a 2 cm mesh plate": "no particle inside a solid",
    "surface: parallel wavefront sweep": "bit-identical",
}


# ---- The README ---------------------------------------------------------------------------------------------

def split_cells(line):
    """The cells of a Markdown table line; '\\|' is a pipe inside a cell."""
    cells, cur, i = [], "", 0
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body) and body[i + 1] == "|":
            cur += "|"
            i += 2
            continue
        if body[i] == "|":
            cells.append(cur.strip())
            cur = ""
        else:
            cur += body[i]
        i += 1
    cells.append(cur.strip())
    return cells


def validation_rows(readme_text):
    """[(first cell, result cell, reproduce cell)] of the first table under '## Validation'."""
    lines = readme_text.splitlines()
    try:
        start = lines.index("## Validation")
    except ValueError:
        return None
    rows, in_table = [], False
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            in_table = True
            cells = split_cells(line)
            if re.fullmatch(r"[-:| ]+", line) or cells[0] == "check":
                continue
            rows.append((cells[0], cells[1] if len(cells) > 1 else "", cells[2] if len(cells) > 2 else ""))
        elif in_table:
            break
    return rows


def find_text(cell, text, start):
    """The end of the first occurrence of `text` in cell at or after `start` that is not part of a longer number
    (no digit or '.' just before it; no digit, or '.' and a digit, just after it when it ends with a digit); -1."""
    pos = cell.find(text, start)
    while pos >= 0:
        end = pos + len(text)
        before = cell[pos - 1] if pos > 0 else " "
        after = cell[end:end + 2]
        starts_number = text[0].isdigit() or (text[0] in "+-." and len(text) > 1)
        ok_before = not (starts_number and (before.isdigit() or before == "."))
        ok_after = not (text[-1].isdigit() and after[:1] and (after[0].isdigit() or re.match(r"\.\d", after)))
        if ok_before and ok_after:
            return end
        pos = cell.find(text, pos + 1)
    return -1


def read_figure(figures_dir, key):
    path = os.path.join(figures_dir, key)
    try:
        with open(path, encoding="ascii") as f:
            value = float(f.read().strip())
    except (OSError, ValueError):
        return None
    return value if math.isfinite(value) else None


def check(readme, figures_dir):
    with open(readme, encoding="utf-8") as f:
        rows = validation_rows(f.read())
    if not rows:
        print("FAIL  %s: no table under '## Validation'" % readme)
        return False
    good = True

    def fail(msg):
        nonlocal good
        good = False
        print("FAIL  " + msg)

    for prefix in list(ROWS) + list(NO_FIGURES):
        n = sum(1 for r in rows if r[0].startswith(prefix))
        if n != 1:
            fail("[%s] the checker's row matches %d README rows (expected 1): update ROWS / NO_FIGURES" % (prefix, n))
    for spec in ROWS.values():
        for figure, _ in spec:
            for k in figure.keys:
                if not test_of(k):
                    fail("%s: no test in TESTS for this key" % k)

    for first, result, reproduce in rows:
        label = first[:60]
        regexes = re.findall(r"`ctest\b[^`]*?-R\s+(\S+)[^`]*`", reproduce)
        if not regexes:
            fail("[%s] no `ctest -R ...` command in the row's reproduce cell" % label)
        figure_prefix = next((p for p in ROWS if first.startswith(p)), None)
        plain_prefix = next((p for p in NO_FIGURES if first.startswith(p)), None)
        if figure_prefix is None:
            if plain_prefix is not None:
                print("ok    [%s] no measured figures (%s)" % (label, NO_FIGURES[plain_prefix]))
            elif re.search(r"\d", result):
                fail("[%s] the result cell has numbers but the checker has no entry for the row: add it to ROWS "
                     "(figures the tests report) or NO_FIGURES (none measured) in %s" % (label, __file__))
            else:
                print("ok    [%s] no numbers" % label)
            continue
        row_tests = {test_of(k) for figure, _ in ROWS[figure_prefix] for k in figure.keys if test_of(k)}
        for test in sorted(row_tests):
            if regexes and not any(safe_search(rx, test) for rx in regexes):
                fail("[%s] %s reports a figure of this row, but no -R of the reproduce cell (%s) selects it"
                     % (label, test, ", ".join(regexes)))
        cursor = 0
        for figure, writer in ROWS[figure_prefix]:
            writer = writer or figure
            values = {k: read_figure(figures_dir, k) for k in figure.keys}
            missing = [k for k, v in values.items() if v is None]
            if missing:
                tests = sorted({test_of(k) or "?" for k in missing})
                fail("[%s] %s: no figure in %s; run: %s" % (label, brief(missing), figures_dir,
                                                          "; ".join("ctest -R %s -V" % t for t in tests)))
                continue
            value = figure.value(values)
            text, problem = writer.text(value)
            shown = ("%.6g..%.6g" % value) if isinstance(value, tuple) else "%.6g" % value
            end = find_text(result, text, cursor)
            if problem:
                fail("[%s] %s = %s: %s" % (label, figure.describe(), shown, problem))
            elif end < 0:
                where = "in the result cell" if cursor == 0 else "after the figure before it"
                fail("[%s] %s = %s, written '%s': not %s: %s" % (label, figure.describe(), shown, text, where, result))
            else:
                print("ok    [%s] %s = %s -> '%s'" % (label, figure.describe(), shown, text))
                cursor = end
    return good


def safe_search(regex, name):
    try:
        return re.search(regex, name) is not None
    except re.error:
        return False


def main(argv):
    if len(argv) == 2 and argv[1] == "--tests":
        print(";".join(sorted(set(TESTS.values()))))
        return 0
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if not os.path.isdir(argv[2]):  # no test has reported a figure in this build yet (e.g. ctest -L regression alone)
        print("readme.figures: skipped: no figures in %s yet; run the validation tests first (ctest -L validation)" % argv[2])
        return 77
    ok = check(argv[1], argv[2])
    print("README figures: %s" % ("all agree" if ok else "FAILED (see the FAIL lines)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
