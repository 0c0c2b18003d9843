// eddy-view: OBJ reading and normals for the surface mesh.
#include "mesh.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "eddy/error.hpp"
#include "eddy/input_file.hpp"

namespace eddy::view {

void SurfaceMesh::compute_normals() {
    if (normals.size() == xyz.size()) return;
    normals.assign(xyz.size(), 0.0f);
    for (std::size_t t = 0; t + 2 < triangles.size(); t += 3) {
        const float* a = &xyz[3 * triangles[t]];
        const float* b = &xyz[3 * triangles[t + 1]];
        const float* c = &xyz[3 * triangles[t + 2]];
        const float u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        const float n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
        for (int k = 0; k < 3; ++k)
            for (int d = 0; d < 3; ++d) normals[3 * triangles[t + k] + d] += n[d];  // area-weighted
    }
    for (std::size_t i = 0; i < normals.size(); i += 3) {
        const float l = std::sqrt(normals[i] * normals[i] + normals[i + 1] * normals[i + 1] + normals[i + 2] * normals[i + 2]);
        if (l > 0) normals[i] /= l, normals[i + 1] /= l, normals[i + 2] /= l;
    }
}

void SurfaceMesh::bounds(float lo[3], float hi[3]) const {
    for (int d = 0; d < 3; ++d) lo[d] = std::numeric_limits<float>::max(), hi[d] = -lo[d];
    for (std::size_t i = 0; i + 2 < xyz.size(); i += 3)
        for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], xyz[i + d]), hi[d] = std::max(hi[d], xyz[i + d]);
}

SurfaceMesh read_obj(const std::filesystem::path& path) {
    // Opened without blocking and read whole (eddy/input_file.hpp): a FIFO is refused, never waited on.
    std::istringstream in(eddy::io::read_regular_file(path, eddy::io::kNoSizeLimit, "the mesh file"));
    SurfaceMesh m;
    std::vector<float> vn;
    std::vector<std::uint32_t> normal_of;  // per face corner: index into vn (or max)
    std::string line;
    int lineno = 0;
    auto fail = [&](const std::string& what) {
        throw InputError(fmt::format("{}: line {}: {}", path.string(), lineno, what));
    };
    while (std::getline(in, line)) {
        ++lineno;
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        if (tag == "v" || tag == "vn") {
            float p[3];
            if (!(ls >> p[0] >> p[1] >> p[2])) fail("expected three numbers after '" + tag + "'");
            auto& dst = tag == "v" ? m.xyz : vn;
            dst.insert(dst.end(), p, p + 3);
        } else if (tag == "f") {
            std::vector<long> vi, ni;
            std::string corner;
            while (ls >> corner) {
                long v = 0, n = 0;
                const auto s1 = corner.find('/');
                try {
                    v = std::stol(corner.substr(0, s1));
                    const auto s2 = s1 == std::string::npos ? s1 : corner.find('/', s1 + 1);
                    if (s2 != std::string::npos && s2 + 1 < corner.size()) n = std::stol(corner.substr(s2 + 1));
                } catch (const std::exception&) {
                    fail("bad face corner '" + corner + "'");
                }
                const long nv = static_cast<long>(m.xyz.size() / 3);
                if (v < 0) v = nv + v + 1;  // negative: relative to the end
                if (v < 1 || v > nv) fail(fmt::format("vertex index {} out of range 1..{}", v, nv));
                vi.push_back(v - 1);
                ni.push_back(n > 0 ? n - 1 : -1);
            }
            if (vi.size() < 3) fail("a face needs at least three vertices");
            for (std::size_t k = 1; k + 1 < vi.size(); ++k)
                for (std::size_t c : {std::size_t(0), k, k + 1}) {
                    m.triangles.push_back(static_cast<std::uint32_t>(vi[c]));
                    normal_of.push_back(ni[c] >= 0 ? static_cast<std::uint32_t>(ni[c]) : UINT32_MAX);
                }
        }
    }
    if (m.triangles.empty()) throw InputError(fmt::format("{}: no faces (f lines) in the mesh file", path.string()));
    // Per-vertex normals from vn when every corner names one (marching-cubes output: one per vertex).
    bool all = !vn.empty();
    for (auto n : normal_of) all = all && n != UINT32_MAX && 3 * std::size_t(n) + 2 < vn.size();
    if (all) {
        m.normals.assign(m.xyz.size(), 0.0f);
        for (std::size_t c = 0; c < m.triangles.size(); ++c)
            for (int d = 0; d < 3; ++d) m.normals[3 * m.triangles[c] + d] = vn[3 * normal_of[c] + d];
    }
    m.compute_normals();
    return m;
}

}  // namespace eddy::view
