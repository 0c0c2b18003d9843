// eddy mesh: particle files to surface meshes (issue 5; docs/surface.md).
#include "cli.hpp"

#include <unistd.h>

#include <cfloat>
#include <cstdio>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/settings.hpp"
#include "eddy/surface.hpp"

namespace eddy::cli {

void add_mesh_command(CLI::App& app, MeshCommand& c) {
    auto* mesh_cmd = c.cmd = app.add_subcommand("mesh", "Reconstruct the fluid surface of particle files: a mesh (.obj/.ply) "
                                            "and optionally the signed distance grid (.vti/.vdb)");
    mesh_cmd->add_option("input", c.mesh_in, "Particle file (.csv, .vtp, .pvtp, .ply) or a folder of frames")->required();
    mesh_cmd->add_option("--out,-o", c.mesh_out, "Mesh file (.obj, .ply); for a folder: the output folder")
    ->required()
    ->check(kNonEmptyPath);
    // Lengths are floats in the library: finite and within a float's range.
    mesh_cmd->add_option("--radius", c.mesh_opts.settings.particle_radius,
                     "Particle radius r (m); default: particle_radius from the run's summary.json")
    ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "radius"));
    mesh_cmd->add_option("--voxel", c.mesh_opts.settings.voxel_size, "Grid spacing (m, > 0); default: 1.0 r")
    ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "voxel"));
    mesh_cmd->add_option("--kernel-radius", c.mesh_opts.settings.kernel_radius, "Splatting support radius (m); default: 4 r")
    ->check(number_check(0, false, FLT_MAX, false, "a length >= 0 (m); 0: 4 r", "kernel_radius"));
    mesh_cmd->add_option("--iso", c.mesh_opts.settings.iso, "Iso level of the volume fraction, 0 < T < 1")
    ->capture_default_str()
    ->check(number_check(0, true, 1, true, "0 < iso < 1 (volume fraction)", "iso"));
    mesh_cmd->add_option("--smooth", c.mesh_opts.settings.smooth_iterations, "Taubin smoothing iterations")
    ->capture_default_str()
    ->check(whole_check(0, 1000, "a whole number from 0 to 1000"));
    mesh_cmd->add_flag("--anisotropic", c.mesh_opts.settings.anisotropic,
                   "Anisotropic kernels (Yu & Turk 2013): positions smoothed, kernels stretched along the surface; "
                   "flat surfaces flat, thin sheets kept (docs/surface.md)");
    mesh_cmd->add_option("--min-volume", c.mesh_opts.settings.min_volume, "Drop pieces enclosing less (m^3; m^2 in 2D)")
    ->check(number_check(0, false, FLT_MAX, false, "a volume >= 0 (m^3; m^2 in 2D)", "min_volume"));
    mesh_cmd->add_option("--vertex-margin", c.mesh_opts.settings.vertex_margin,
                     "Keep every vertex this fraction of a voxel from grid nodes (no slivers; 0: plain marching cubes)")
    ->capture_default_str()
    ->check(number_check(0, false, 0.25, false, "a fraction of a voxel from 0 to 0.25", "vertex_margin"));
    mesh_cmd->add_option("--decimate-error", c.mesh_opts.settings.decimate_error,
                     "Decimate the meshes (edge collapse, meshoptimizer), moving the surface at most this many "
                     "voxels (two-sided Hausdorff); 0: no bound")
    ->check(number_check(0, false, 1000, false, "a distance from 0 to 1000 voxels", "decimate_error"));
    mesh_cmd->add_option("--decimate-ratio", c.mesh_opts.settings.decimate_ratio,
                     "Decimate the meshes to at most this fraction of their triangles; 0: as few as --decimate-error "
                     "allows")
    ->check(number_check(0, false, 1, false, "a fraction from 0 to 1", "decimate_ratio"));
    mesh_cmd->add_option("--block-size", c.mesh_opts.settings.block_size, "Voxels per block edge (4..32)")
    ->capture_default_str()
    ->check(whole_check(4, 32, "a whole number from 4 to 32"));
    mesh_cmd->add_option("--format", c.mesh_opts.format,
                     "Mesh format for a folder of frames: obj, ply, vtp (surface.pvd lists .vtp files: with obj or "
                     "ply a .vtp is written beside each)")
    ->capture_default_str()
    ->check(CLI::IsMember({"obj", "ply", "vtp"}));
    mesh_cmd->add_option("--interpolate-attributes", c.mesh_opts.attributes,
                     "PLY meshes: particle fields carried onto the vertices, comma separated: velocity, density, "
                     "pressure (as in the particle files)")
    ->delimiter(',')
    ->check(CLI::IsMember({"velocity", "density", "pressure"}));
    mesh_cmd->add_option("--up", c.mesh_up,
                     "Up axis of the meshes: y or z; default: the particles' (up_axis in the run's summary.json, y "
                     "without one)")
    ->check(CLI::IsMember({"y", "z"}));
    mesh_cmd->add_option("--sdf", c.mesh_sdf, "Also write the signed distance grid: FILE.vti (VTK) or FILE.vdb (OpenVDB level set)");
    mesh_cmd->footer("\nSettings (flags above; ranges as checked):\n" +
                 eddy::describe(eddy::surface_fields(), eddy::SurfaceSettings{}) +
                 "\nINPUT a folder: every particle file in it (one per frame), meshed in parallel into --out (a folder).\n"
                 "See docs/surface.md. Exit codes: 0 done, 1 failure, 2 bad input.\n");
    mesh_cmd->add_option("--threads,-j", c.mesh_threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
    ->check(kThreadsCheck);
    mesh_cmd->add_option("--max-memory", c.mesh_max_memory, kMaxMemoryHelp);
    mesh_cmd->add_flag("--allow-outside-references", c.mesh_opts.allow_outside_references,
                   "Let a .pvtp's <Piece Source> name files outside its folder (absolute, '..'); default: refused");
}

int mesh_command(MeshCommand& c, std::string& doing) {
    // --voxel 0 would mean "default" in the library; on the command line it is a mistake.
    if (c.cmd->count("--voxel") && !(c.mesh_opts.settings.voxel_size > 0.0f))
        throw eddy::InputError(fmt::format("eddy mesh: key 'voxel' = {}: allowed: a length > 0 (m)",
                                           c.mesh_opts.settings.voxel_size));
    if (c.cmd->count("--radius") && !(c.mesh_opts.settings.particle_radius > 0.0f))
        throw eddy::InputError(fmt::format("eddy mesh: key 'radius' = {}: allowed: a length > 0 (m)",
                                           c.mesh_opts.settings.particle_radius));
    doing = fmt::format("meshing {}", c.mesh_in);
    c.mesh_opts.input = c.mesh_in;
    c.mesh_opts.out = c.mesh_out;
    for (const auto& f : c.mesh_sdf) c.mesh_opts.sdf_out.emplace_back(f);
    c.mesh_opts.budget = memory_budget(c.mesh_max_memory);
    if (!c.mesh_up.empty()) c.mesh_opts.up = eddy::parse_up_axis(c.mesh_up, "--up");
    eddy::ExecContext exec(c.mesh_threads);
    const auto rep = eddy::mesh_particle_files(c.mesh_opts, exec);
    std::fprintf(stderr, "eddy: %zu frame(s), %dD, r = %g m: %zu vertices, %zu %s -> %s%s\n", rep.frames,
                 rep.dimension, rep.particle_radius, rep.vertices, rep.cells,
                 rep.dimension == 3 ? "triangles" : "segments", c.mesh_out.c_str(),
                 rep.times_from.empty() ? "" : fmt::format(" (surface.pvd, times from {})", rep.times_from).c_str());
    // Throughput on a terminal, as the run's progress (piped output stays one line).
    if (rep.frames > 1 && isatty(STDERR_FILENO) && rep.seconds > 0.0)
        std::fprintf(stderr, "eddy: %zu frames in %.1f s: %.1f frames per minute\n", rep.frames, rep.seconds,
                     60.0 * double(rep.frames) / rep.seconds);
    return eddy::kExitOk;
}

}  // namespace eddy::cli
