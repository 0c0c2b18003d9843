// The page's whitewater: eddy run's (detail::LiveWhitewater) beside the page's simulation.
#include "page_whitewater.hpp"

#include <nlohmann/json.hpp>

namespace eddy::web {

void PageWhitewater::start(Simulation* sim) {
    m_w = std::monostate{};
    if (!sim) return;
    RunOptions opts;  // eddy run --whitewater: its default settings and substeps; no files are written
    opts.whitewater = true;
    std::visit([&](const auto& s) {
        constexpr int D = std::remove_cvref_t<decltype(s)>::kDimension;
        m_w.emplace<detail::LiveWhitewater<D>>(opts, s.scene, s.scene.output.fps, UpAxis::y, s.time);
    }, *sim);
}

void PageWhitewater::after_step(Simulation& sim, const ExecContext& exec) {
    std::visit([&](auto& s) {
        constexpr int D = std::remove_cvref_t<decltype(s)>::kDimension;
        auto* w = std::get_if<detail::LiveWhitewater<D>>(&m_w);
        if (w && w->due(s.time)) w->step(s, &s.fluid, exec);  // as eddy run's whitewater_step on one process
    }, sim);
}

void PageWhitewater::points(std::vector<float>& xyz, std::uint64_t by_type[3]) const {
    xyz.clear();
    by_type[0] = by_type[1] = by_type[2] = 0;
    std::visit([&](const auto& live) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(live)>, std::monostate>) {
            constexpr int D = std::decay_t<decltype(live)>::kDimension;
            const auto& w = live.state();
            xyz.reserve(3 * w.size());
            for (std::uint8_t t = 0; t < 3; ++t)
                for (std::size_t i = 0; i < w.size(); ++i) {
                    if (w.type[i] != t) continue;
                    for (int a = 0; a < 3; ++a) xyz.push_back(a < D ? w.position[i][a] : 0.0f);
                    ++by_type[t];
                }
        }
    }, m_w);
}

std::string PageWhitewater::counts() const {
    nlohmann::json j = nlohmann::json::object();
    std::visit([&](const auto& live) {
        if constexpr (!std::is_same_v<std::decay_t<decltype(live)>, std::monostate>) {
            const WhitewaterCounts& c = live.state().counts;
            j = {{"spray", c.spray}, {"foam", c.foam}, {"bubbles", c.bubbles}, {"generated", c.generated},
                 {"expired", c.expired}, {"escaped", c.escaped}, {"walled", c.walled}, {"capped", c.capped}};
        }
    }, m_w);
    return j.dump();
}

std::string PageWhitewater::record() const {
    return std::visit([](const auto& live) -> std::string {
        if constexpr (std::is_same_v<std::decay_t<decltype(live)>, std::monostate>) return "{}";
        else return live.record().dump();
    }, m_w);
}

}  // namespace eddy::web
