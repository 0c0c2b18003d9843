// The page's whitewater (issue 43; docs/web.md): spray, foam and bubbles stepped beside the page's particle
// simulation as `eddy run --whitewater` steps them (detail::LiveWhitewater with eddy run's defaults: every
// 1/(fps 10) s of simulated time, the scene's fps, its walls, the method's own neighbour lists), so that
// after N steps the page's diffuse particles are the native run's, bit for bit (web.whitewater compares
// them with the run's checkpoint). Switched on, it starts from nothing at the simulation's time; a new
// scene starts it afresh; switched off, it is dropped.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "eddy/exec.hpp"
#include "eddy/simulation.hpp"
#include "sim/whitewater_output.hpp"

namespace eddy::web {

class PageWhitewater {
public:
    /// Starts afresh beside `sim` (a particle simulation), or stops (null).
    void start(Simulation* sim);
    void stop() { m_w = std::monostate{}; }
    bool on() const { return !std::holds_alternative<std::monostate>(m_w); }
    /// After each fluid step of `sim` (the one start() was given): a whitewater step when one is due.
    void after_step(Simulation& sim, const ExecContext& exec);
    /// The diffuse particles as x, y, z each (z = 0 in 2D), grouped by type: spray first, then foam, then
    /// bubbles (the page draws each group in its colour, as the viewer does); `by_type`: the three counts.
    void points(std::vector<float>& xyz, std::uint64_t by_type[3]) const;
    /// {"spray", "foam", "bubbles", "generated", "expired", "escaped", "walled", "capped"}; {} when off.
    std::string counts() const;
    /// What eddy run's checkpoint keeps of it (the run record's "whitewater": clock, particles, counts).
    std::string record() const;

private:
    std::variant<std::monostate, detail::LiveWhitewater<2>, detail::LiveWhitewater<3>> m_w;
};

}  // namespace eddy::web
