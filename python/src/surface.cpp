// eddy.reconstruct_surface, eddy.read_particles, eddy.write_mesh: the surface pipeline of `eddy mesh`
// and eddy's particle and mesh files, on numpy arrays (copies: the results are new arrays).
#include <cstring>

#include "bindings.hpp"
#include "eddy/error.hpp"
#include "eddy/exec.hpp"
#include "eddy/io.hpp"
#include "eddy/surface.hpp"

namespace eddy::python {

namespace {

using Points = py::array_t<float, py::array::c_style | py::array::forcecast>;

template <int D>
std::vector<Vec<D>> to_points(const Points& p) {
    std::vector<Vec<D>> v(std::size_t(p.shape(0)));
    if (!v.empty()) std::memcpy(v.data(), p.data(), v.size() * sizeof(Vec<D>));
    return v;
}

template <int D>
py::tuple mesh_arrays(const Mesh<D>& m) {
    py::array_t<float> vertices({py::ssize_t(m.vertices.size()), py::ssize_t(D)});
    py::array_t<std::int32_t> cells({py::ssize_t(m.cells.size()), py::ssize_t(D)});
    if (!m.vertices.empty()) std::memcpy(vertices.mutable_data(), m.vertices.data(), m.vertices.size() * sizeof(Vec<D>));
    auto c = cells.mutable_unchecked<2>();
    for (std::size_t k = 0; k < m.cells.size(); ++k)
        for (int a = 0; a < D; ++a) c(py::ssize_t(k), a) = std::int32_t(m.cells[k][a]);
    return py::make_tuple(vertices, cells);
}

/// Named per-row arrays from Python ({name: (n,) or (n, c)}), as float32 copies with their widths.
struct Columns {
    std::vector<std::string> names;
    std::vector<int> widths;
    std::vector<std::vector<float>> values;
    Columns(const py::dict& d, std::size_t rows, const std::string& what) {
        for (const auto& [k, v] : d) {
            const std::string name = py::str(k);
            const auto a = v.cast<py::array_t<float, py::array::c_style | py::array::forcecast>>();
            if (a.ndim() < 1 || a.ndim() > 2 || std::size_t(a.shape(0)) != rows)
                throw InputError(what + ": attribute '" + name + "': expected an array of shape (" + std::to_string(rows) +
                                 ",) or (" + std::to_string(rows) + ", c)");
            const int w = a.ndim() == 2 ? int(a.shape(1)) : 1;
            if (w < 1 || w > 16) throw InputError(what + ": attribute '" + name + "': 1 to 16 components");
            names.push_back(name);
            widths.push_back(w);
            values.emplace_back(a.data(), a.data() + rows * std::size_t(w));
        }
    }
};

py::dict attribute_arrays(const std::vector<VertexAttribute>& attrs, std::size_t rows) {
    py::dict d;
    for (const auto& a : attrs) {
        py::array_t<float> arr = a.components == 1 ? py::array_t<float>(py::ssize_t(rows))
                                                   : py::array_t<float>({py::ssize_t(rows), py::ssize_t(a.components)});
        if (!a.values.empty()) std::memcpy(arr.mutable_data(), a.values.data(), a.values.size() * sizeof(float));
        d[py::str(a.name)] = arr;
    }
    return d;
}

template <int D>
py::tuple reconstruct(const Points& points, const SurfaceSettings& s, int threads, const py::object& attributes) {
    const std::vector<Vec<D>> p = to_points<D>(points);
    const Columns cols(attributes.is_none() ? py::dict() : py::dict(attributes), p.size(), "reconstruct_surface");
    std::vector<ParticleField> fields;
    for (std::size_t k = 0; k < cols.names.size(); ++k) fields.push_back({cols.names[k], cols.widths[k], cols.values[k]});
    Mesh<D> mesh;
    {
        py::gil_scoped_release release;
        ExecContext exec(threads);
        mesh = reconstruct_surface<D>(p, s, exec).mesh;
        interpolate_attributes<D>(mesh, p, fields, s.support(), exec);
    }
    py::tuple vf = mesh_arrays(mesh);
    if (attributes.is_none()) return vf;
    return py::make_tuple(vf[0], vf[1], attribute_arrays(mesh.attributes, mesh.vertices.size()));
}

template <int D>
Mesh<D> to_mesh(const Points& vertices, const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& cells) {
    if (cells.ndim() != 2 || cells.shape(1) != D)
        throw InputError("write_mesh: faces must have shape (k, " + std::to_string(D) + ")");
    Mesh<D> m;
    m.vertices = to_points<D>(vertices);
    m.cells.resize(std::size_t(cells.shape(0)));
    auto c = cells.unchecked<2>();
    for (std::size_t k = 0; k < m.cells.size(); ++k)
        for (int a = 0; a < D; ++a) {
            const std::int64_t i = c(py::ssize_t(k), a);
            if (i < 0 || std::size_t(i) >= m.vertices.size())
                throw InputError("write_mesh: face " + std::to_string(k) + " names vertex " + std::to_string(i) +
                                 "; allowed: 0 to " + std::to_string(m.vertices.size()) + " - 1");
            m.cells[k][a] = std::uint32_t(i);
        }
    return m;
}

int dimension_of(const Points& p, const char* what) {
    if (p.ndim() != 2 || (p.shape(1) != 2 && p.shape(1) != 3))
        throw InputError(std::string(what) + ": expected an array of shape (n, 3) or (n, 2)");
    return int(p.shape(1));
}

}  // namespace

void bind_surface(py::module_& m) {
    m.def(
        "reconstruct_surface",
        [](const Points& points, float radius, float voxel, float iso, int smooth, float kernel_radius,
           float min_volume, const py::int_& threads_given, const py::object& attributes, bool anisotropic) {
            const int threads = threads_arg(threads_given, "reconstruct_surface: threads");
            SurfaceSettings s;
            s.particle_radius = radius;
            s.voxel_size = voxel;
            s.iso = iso;
            s.smooth_iterations = smooth;
            s.kernel_radius = kernel_radius;
            s.min_volume = min_volume;
            s.anisotropic = anisotropic;
            validate(s, "reconstruct_surface");
            return dimension_of(points, "reconstruct_surface") == 3 ? reconstruct<3>(points, s, threads, attributes)
                                                                    : reconstruct<2>(points, s, threads, attributes);
        },
        py::arg("points"), py::arg("radius"), py::arg("voxel") = 0.0f, py::arg("iso") = 0.5f, py::arg("smooth") = 0,
        py::arg("kernel_radius") = 0.0f, py::arg("min_volume") = 0.0f, py::arg("threads") = 0,
        py::arg("attributes") = py::none(), py::arg("anisotropic") = false,
        "reconstruct_surface(points, radius, voxel=0, iso=0.5, smooth=0, kernel_radius=0, min_volume=0,\n"
        "                    threads=0, attributes=None, anisotropic=False) -> (vertices, faces) or (vertices, faces, attrs)\n\n"
        "The fluid surface of particles, as `eddy mesh` makes it (docs/surface.md): points (n, 3) or (n, 2)\n"
        "in m, radius r (m); voxel 0 = r, kernel_radius 0 = 4 r; iso in (0, 1) of the volume fraction;\n"
        "smooth: Taubin iterations; anisotropic: Yu & Turk's anisotropic kernels (flat surfaces flat, thin\n"
        "sheets kept; eddy mesh --anisotropic); threads: 0 uses every core, else 1 to 4096. Returns vertices (m, D)\n"
        "float32 and faces (k, D) int32 (triangles in 3D, segments in 2D), closed and outward-oriented.\n"
        "attributes: {name: (n,) or (n, c) array} of\n"
        "per-particle fields (e.g. {'velocity': v}): each is interpolated onto the vertices (normalised\n"
        "cubic-spline average over the particles within the kernel radius, as eddy mesh\n"
        "--interpolate-attributes) and returned as a third element, {name: (m,) or (m, c) float32}.");

    m.def(
        "read_particles",
        [](const std::filesystem::path& path) {
            const ParticleSet<3> p = io::read_particles<3>(path);
            const py::ssize_t n = py::ssize_t(p.size());
            py::array_t<float> x({n, py::ssize_t(3)}), v({n, py::ssize_t(3)}), rho(n), pr(n);
            py::array_t<std::uint32_t> id(n);
            auto copy = [&](auto& dst, const auto& src, std::size_t each) {  // a field the file lacks: zeros
                if (n > 0 && src.size() == std::size_t(n))
                    std::memcpy(dst.mutable_data(), src.data(), std::size_t(n) * each);
                else if (n > 0)
                    std::memset(dst.mutable_data(), 0, std::size_t(n) * each);
            };
            copy(x, p.position, sizeof(Vec<3>));
            copy(v, p.velocity, sizeof(Vec<3>));
            copy(rho, p.density, sizeof(float));
            copy(pr, p.pressure, sizeof(float));
            copy(id, p.id, sizeof(std::uint32_t));
            py::dict d;
            d["positions"] = x;
            d["velocities"] = v;
            d["density"] = rho;
            d["pressure"] = pr;
            d["ids"] = id;
            return d;
        },
        py::arg("path"),
        "read_particles(path) -> dict of numpy arrays: positions and velocities (n, 3) float32 (z = 0 for a\n"
        "2D frame), density, pressure (n,) float32, ids (n,) uint32; from eddy's .csv, .vtp or .ply frames\n"
        "(fields a file lacks are zeros).");

    m.def(
        "write_mesh",
        [](const std::filesystem::path& path, const Points& vertices,
           const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& faces, const py::object& attributes) {
            const int D = dimension_of(vertices, "write_mesh");
            const Columns cols(attributes.is_none() ? py::dict() : py::dict(attributes), std::size_t(vertices.shape(0)),
                               "write_mesh");
            if (!cols.names.empty() && path.extension() != ".ply")
                throw InputError(path.string() + ": vertex attributes need a .ply file (OBJ has no per-vertex fields)");
            auto with = [&](auto m) {
                for (std::size_t k = 0; k < cols.names.size(); ++k)
                    m.attributes.push_back({cols.names[k], cols.widths[k], cols.values[k]});
                return m;
            };
            if (D == 3)
                write_mesh<3>(path, with(to_mesh<3>(vertices, faces)));
            else
                write_mesh<2>(path, with(to_mesh<2>(vertices, faces)));
        },
        py::arg("path"), py::arg("vertices"), py::arg("faces"), py::arg("attributes") = py::none(),
        "write_mesh(path, vertices, faces, attributes=None): a mesh as .obj or .ply (by the extension), written\n"
        "atomically. attributes {name: (m,) or (m, c)} become PLY vertex properties (velocity as vx vy vz).");
}

}  // namespace eddy::python
