// The fluid's loads on the boundary objects in the run's files: forces.csv, the run record (resume) and
// summary.json (issue 28; eddy/wall_loads.hpp computes them).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "run_support.hpp"

namespace eddy::detail {

void write_forces_csv(const std::filesystem::path& file, const std::vector<FrameRecord>& frames) {
    std::string text = "time,object,fx,fy,fz,tx,ty,tz\n";
    for (const FrameRecord& f : frames) {
        if (f.index == 0) continue;  // the first frame has no steps before it
        for (std::size_t o = 0; o < f.loads.size(); ++o) {
            const ObjectLoad& l = f.loads[o];
            text += fmt::format("{:.17g},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", f.time, o, l.force[0],
                                l.force[1], l.force[2], l.torque[0], l.torque[1], l.torque[2]);
        }
    }
    io::write_atomic(file, text);
}

nlohmann::json loads_json(const std::vector<ObjectLoad>& loads) {
    nlohmann::json a = nlohmann::json::array();
    for (const ObjectLoad& l : loads)
        a.push_back({l.force[0], l.force[1], l.force[2], l.torque[0], l.torque[1], l.torque[2]});
    return a;
}

nlohmann::json loads_summary(const std::vector<ObjectLoad>& loads) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t o = 0; o < loads.size(); ++o)
        a.push_back({{"object", o}, {"force", loads[o].force}, {"torque", loads[o].torque}});
    return a;
}

std::vector<ObjectLoad> loads_from_record(const RecordReader& r, const nlohmann::json& v, const std::string& what,
                                          std::size_t objects) {
    if (!v.is_array() || v.size() != objects)
        r.fail(what, fmt::format("is not a list of {} loads (one per boundary object)", objects));
    std::vector<ObjectLoad> out(objects);
    for (std::size_t o = 0; o < objects; ++o) {
        const std::string at = fmt::format("{}[{}]", what, o);
        if (!v[o].is_array() || v[o].size() != 6) r.fail(at, "is not 6 numbers (force, torque)");
        for (int a = 0; a < 3; ++a) {
            out[o].force[a] = r.number_at(v[o][a], fmt::format("{}[{}]", at, a), -1e300, 1e300);
            out[o].torque[a] = r.number_at(v[o][3 + a], fmt::format("{}[{}]", at, 3 + a), -1e300, 1e300);
        }
    }
    return out;
}

}  // namespace eddy::detail
