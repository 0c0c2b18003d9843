// The bodies in the run's files: bodies.csv and the run record (issue 30; eddy/bodies.hpp moves them).
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "eddy/io.hpp"
#include "run_support.hpp"

namespace eddy::detail {

void write_bodies_csv(const std::filesystem::path& file, const std::vector<FrameRecord>& frames,
                      const std::vector<std::uint16_t>& objects) {
    std::string text = "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz\n";
    for (const FrameRecord& f : frames)
        for (std::size_t k = 0; k < f.bodies.size() && k < objects.size(); ++k) {
            const BodyState& s = f.bodies[k];
            const ObjectLoad l = objects[k] < f.loads.size() ? f.loads[objects[k]] : ObjectLoad{};
            text += fmt::format("{:.17g},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},"
                                "{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n",
                                f.time, k, s.position[0], s.position[1], s.position[2], s.orientation[0], s.orientation[1],
                                s.orientation[2], s.orientation[3], s.velocity[0], s.velocity[1], s.velocity[2],
                                s.angular_velocity[0], s.angular_velocity[1], s.angular_velocity[2], l.force[0], l.force[1],
                                l.force[2], l.torque[0], l.torque[1], l.torque[2]);
        }
    io::write_atomic(file, text);
}

nlohmann::json bodies_json(const std::vector<BodyState>& bodies) {
    nlohmann::json a = nlohmann::json::array();
    for (const BodyState& s : bodies) {
        nlohmann::json row = nlohmann::json::array();
        for (double x : s.position) row.push_back(x);
        for (double x : s.orientation) row.push_back(x);
        for (double x : s.velocity) row.push_back(x);
        for (double x : s.angular_velocity) row.push_back(x);
        a.push_back(std::move(row));
    }
    return a;
}

std::vector<BodyState> bodies_from_record(const RecordReader& r, const nlohmann::json& v, const std::string& what,
                                          std::size_t bodies) {
    if (!v.is_array() || v.size() != bodies) r.fail(what, fmt::format("is not a list of {} body states", bodies));
    std::vector<BodyState> out(bodies);
    for (std::size_t k = 0; k < bodies; ++k) {
        const std::string at = fmt::format("{}[{}]", what, k);
        if (!v[k].is_array() || v[k].size() != 13) r.fail(at, "is not 13 numbers (position, orientation, velocities)");
        double x[13];
        for (int i = 0; i < 13; ++i) x[i] = r.number_at(v[k][i], fmt::format("{}[{}]", at, i), -1e300, 1e300);
        for (int i = 0; i < 3; ++i) {
            out[k].position[i] = x[i];
            out[k].velocity[i] = x[7 + i];
            out[k].angular_velocity[i] = x[10 + i];
        }
        for (int i = 0; i < 4; ++i) out[k].orientation[i] = x[3 + i];
    }
    return out;
}

}  // namespace eddy::detail
