// A shallow-water run on one process: the shared run loop (src/shallow/run_loop.hpp) over the solver
// itself; and the state hash of a grid.
#include "eddy/error.hpp"
#include "shallow/run_loop.hpp"
#include "sim/slice_loop.hpp"

namespace eddy {

namespace {

// One process: the solver itself, the whole grid (src/shallow/run_loop.hpp says what a stepper is).
template <class Real>
class LocalStepper {
public:
    LocalStepper(ShallowWaterSimulation& sim, ShallowWaterSolver<Real>& solver) : m_sim(sim), m_solver(solver) {}
    const ShallowWaterScene& spec() const { return m_sim.spec; }
    const ShallowWaterSettings& settings() const { return m_solver.scene().settings; }
    double time() const { return m_solver.time(); }
    std::uint64_t steps() const { return m_solver.steps(); }
    bool root() const { return true; }
    double suggest_dt() const { return m_solver.suggest_dt(); }
    ShallowWaterStats step(double dt, const ExecContext& exec) { return m_solver.step(dt, exec); }
    const ShallowWaterGrid<Real>* gather() const { return &m_solver.grid(); }
    /// The floating bodies (the distributed stepper has none: run_grid_loop refuses a scene with bodies there).
    const std::vector<ShallowBody>& bodies() const { return m_solver.bodies(); }
    bool any(bool v) const { return v; }
    template <class F>
    void on_root(F&& f) const { f(); }
    double total_inflow() const { return m_solver.total_inflow(); }
    double total_outflow() const { return m_solver.total_outflow(); }
    void checkpoint(const std::filesystem::path& file, const nlohmann::json& record) const { write_checkpoint(file, m_sim, record); }
    /// The final state's hash (state_hash: the web page's test compares it, tests/web/).
    void describe(nlohmann::json& j) const { j["state_hash"] = fmt::format("{:016x}", state_hash(m_sim)); }
    std::vector<std::string> write_pieces(const std::filesystem::path& out, const std::string& pvti) const {
        const auto& g = m_solver.grid();
        const std::string piece = detail::grid_piece_name(pvti, 0);
        io::write_vti_piece(out / piece, g, whole_grid(g.nx, g.ny));
        const io::GridPiece p{0, g.nx, 0, g.ny, std::filesystem::path(piece).filename().string()};
        io::write_pvti(out / pvti, g.nx, g.ny, double(g.dx), sizeof(Real) == 8, std::span<const io::GridPiece>(&p, 1),
                       !g.displaced.empty());
        return {piece};
    }
    double volume() const { return m_solver.grid().volume(); }
    bool gathers() const { return true; }
    [[noreturn]] void refuse(const std::string& message) const { throw InputError(message); }

private:
    ShallowWaterSimulation& m_sim;
    ShallowWaterSolver<Real>& m_solver;
};

}  // namespace

RunResult run(ShallowWaterSimulation& sim, const RunOptions& opts, const ExecContext& exec) {
    return std::visit(
        [&](auto& solver) -> RunResult {
            LocalStepper stepper(sim, solver);
            return detail::run_grid_loop(stepper, sim.scene, opts, exec);
        },
        sim.solver);
}

double next_landing(const ShallowWaterSimulation& sim) {
    const double time = std::visit([](const auto& s) { return s.time(); }, sim.solver);
    return SliceLimits{}.landing(sim.scene.output.fps, sim.scene.duration, time).target(time);
}

ShallowWaterStats step(ShallowWaterSimulation& sim, const ExecContext& exec, double target) {
    return std::visit(
        [&](auto& s) {
            const double dt = s.suggest_dt();
            return s.step(target > 0.0 ? landing_dt(dt, s.time(), target) : dt, exec);  // as GridRun::advance
        },
        sim.solver);
}

std::string grid_step_divergence(const ShallowWaterStats& st, double suggested_dt) {
    constexpr double kDtMin = 1e-9;
    if (st.non_finite) return "a depth or velocity is not finite (NaN or infinite)";
    if (st.halo_overrun)
        return fmt::format("{} cells traced back past their block's halo (a back-trace longer than the halo is wide: "
                           "lower advection_step or the time step, or run on fewer processes)",
                           st.halo_overrun);
    if (suggested_dt < kDtMin) return fmt::format("the time step fell below {:g} s", kDtMin);
    return {};
}

GridSliceResult step_slice(ShallowWaterSimulation& sim, const ExecContext& exec, const SliceLimits& limits,
                           const std::function<void(const ShallowWaterStats&)>& after_step) {
    return std::visit(
        [&](auto& s) {
            return detail::slice_loop<ShallowWaterStats>(
                limits, [&] { return s.time(); },
                [&](double time) { return limits.landing(sim.scene.output.fps, sim.scene.duration, time); },
                [&](double target, ShallowWaterStats& last) {
                    const double suggested = s.suggest_dt();  // the step as GridRun::advance takes it
                    last = s.step(landing_dt(suggested, s.time(), target), exec);
                    if (after_step) after_step(last);
                    const std::string why = grid_step_divergence(last, suggested);
                    return why.empty() ? why : divergence_message(s.steps(), s.time(), why);
                });
        },
        sim.solver);
}

std::uint64_t state_hash(const ShallowWaterSimulation& sim) {
    return std::visit(
        [](const auto& solver) {
            std::uint64_t h = 1469598103934665603ull;
            auto mix = [&](const auto& v) {
                const auto* p = reinterpret_cast<const unsigned char*>(v.data());
                for (std::size_t i = 0; i < v.size() * sizeof(v[0]); ++i) {
                    h ^= p[i];
                    h *= 1099511628211ull;
                }
            };
            const auto& g = solver.grid();
            mix(g.depth);
            mix(g.u);
            mix(g.w);
            mix(g.ink);
            for (const auto& b : solver.bodies()) {  // pose and velocities, bit for bit
                mix(b.x);
                mix(b.q);
                mix(b.v);
                mix(b.omega);
            }
            return h;
        },
        sim.solver);
}

}  // namespace eddy
