// eddy whitewater: spray, foam and bubbles of a finished particle run (issue 32; docs/whitewater.md).
#include "cli.hpp"

#include <cfloat>
#include <cstdio>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/settings.hpp"
#include "eddy/whitewater.hpp"

namespace eddy::cli {

void add_whitewater_command(CLI::App& app, WhitewaterCommand& c) {
    auto* ww_cmd = c.cmd = app.add_subcommand("whitewater", "Spray, foam and bubbles (Ihmsen et al. 2012) of a finished particle "
                                                "run, from its frames, written into its folder");
    ww_cmd->add_option("run_dir", c.ww_dir, "The output folder of `eddy run` (frames/, summary.json)")->required()->check(kNonEmptyPath);
    ww_cmd->add_option("--substeps", c.ww_opts.substeps, "Whitewater steps between two frames (fluid interpolated linearly)")
    ->capture_default_str()
    ->check(whole_check(1, 100000, "a whole number from 1 to 100000"));
    ww_cmd->add_option("--set", c.ww_sets, "A whitewater setting KEY=VALUE (repeatable; keys below)");
    ww_cmd->add_option("--radius", c.ww_opts.particle_radius, "Particle radius r (m); default: summary.json's")
    ->check(number_check(0, true, FLT_MAX, false, "a length > 0 (m)", "radius"));
    ww_cmd->add_option("--threads,-j", c.ww_threads, "Worker threads, at most 4096 (default and 0: all cores); results do not depend on it")
    ->check(kThreadsCheck);
    ww_cmd->add_flag("--allow-outside-references", c.ww_opts.allow_outside_references,
                 "Let frames (symbolic links) and a .pvtp's <Piece Source> lead outside the run folder; default: refused");
    ww_cmd->add_option("--max-memory", c.ww_max_memory, kMaxMemoryHelp);
    ww_cmd->footer("\nSettings (--set KEY=VALUE; ranges as checked):\n" +
               eddy::describe(eddy::whitewater_fields(), eddy::WhitewaterSettings{}) +
               "\nWrites frames/whitewater_NNNNN.vtp/.ply, whitewater.pvd, whitewater.csv into RUN_DIR (docs/whitewater.md).\n"
               "Exit codes: 0 done, 1 failure, 2 bad input.\n");
}

int whitewater_command(WhitewaterCommand& c, std::string& doing) {
    doing = fmt::format("making the whitewater of {}", c.ww_dir);
    c.ww_opts.run_dir = c.ww_dir;
    c.ww_opts.settings = eddy::whitewater_settings_from(c.ww_sets, "eddy whitewater --set");
    c.ww_opts.budget = memory_budget(c.ww_max_memory);
    eddy::ExecContext exec(c.ww_threads);
    const auto rep = eddy::whitewater_post_process(c.ww_opts, exec);
    for (const auto& w : rep.warnings) std::fprintf(stderr, "eddy: warning: %s\n", w.c_str());
    const auto last = rep.rows.empty() ? eddy::WhitewaterFiles::Row{} : rep.rows.back();
    std::fprintf(stderr, "eddy: %d frame(s), %dD: last frame %llu spray, %llu foam, %llu bubbles -> %s/whitewater.csv\n",
                 rep.frames, rep.dimension, (unsigned long long)last.spray, (unsigned long long)last.foam,
                 (unsigned long long)last.bubbles, c.ww_dir.c_str());
    return eddy::kExitOk;
}

}  // namespace eddy::cli
