// The one file that includes OpenVDB (its headers take ~30 s to compile): .vdb level-set output, and
// OpenVDB's own tools (fogToSdf, particlesToSdf + volumeToMesh) for the cross-check test and the
// benchmarks. OpenVDB's parallel loops run inside the caller's arena when called from exec.run().
#include <cfloat>
#include <chrono>
#include <cmath>
#include <sstream>

#include <openvdb/openvdb.h>
#include <openvdb/io/File.h>
#include <openvdb/io/Stream.h>
#include <openvdb/tools/FastSweeping.h>
#include <openvdb/tools/LevelSetUtil.h>
#include <openvdb/tools/ParticlesToLevelSet.h>
#include <openvdb/tools/SignedFloodFill.h>
#include <openvdb/tools/VolumeToMesh.h>

#include "eddy/io.hpp"
#include "eddy/surface.hpp"

namespace eddy::vdb {

namespace {

void init() {
    // openvdb::initialize() registers grid types; it is idempotent and thread-safe.
    openvdb::initialize();
}

template <int D>
openvdb::Coord to_coord(const std::array<int, D>& i) {
    return openvdb::Coord(i[0], i[1], D == 3 ? i[D - 1] : 0);
}

}  // namespace

template <int D>
void write_level_set(const std::filesystem::path& path, const SparseGrid<D>& sdf, float half_width_voxels,
                     const SparseGrid<D>* density) {
    init();
    const float band = half_width_voxels * sdf.layout.voxel;
    auto grid = openvdb::FloatGrid::create(band);
    grid->setTransform(openvdb::math::Transform::createLinearTransform(sdf.layout.voxel));
    grid->setGridClass(openvdb::GRID_LEVEL_SET);
    grid->setName("surface");
    auto acc = grid->getAccessor();
    sdf.for_each_node([&](const std::array<int, D>& i, float v) {
        if (std::abs(v) < band) acc.setValue(to_coord<D>(i), v);
    });
    // Inside the band's closed shell, inactive values become -band (OpenVDB's level-set convention).
    openvdb::tools::signedFloodFill(grid->tree());
    openvdb::GridPtrVec grids{grid};
    if (density) {  // the volume fraction as a fog volume, for Blender (its default grid name)
        auto fog = openvdb::FloatGrid::create(0.0f);
        fog->setTransform(openvdb::math::Transform::createLinearTransform(density->layout.voxel));
        fog->setGridClass(openvdb::GRID_FOG_VOLUME);
        fog->setName("density");
        auto facc = fog->getAccessor();
        density->for_each_node([&](const std::array<int, D>& i, float v) {
            if (v > 0.0f) facc.setValue(to_coord<D>(i), v);
        });
        grids.push_back(fog);
    }
    std::ostringstream os(std::ios_base::binary);
    openvdb::io::Stream(os).write(grids);
    io::write_atomic(path, os.str());
}

FileInfo read_info(const std::filesystem::path& path, const Vec3& probe) {
    init();
    openvdb::io::File file(path.string());
    file.open();
    const auto grids = file.getGrids();
    file.close();
    FileInfo info;
    if (!grids || grids->empty()) return info;
    for (const auto& g : *grids) info.grids.push_back(g->getName());
    const auto grid = openvdb::gridPtrCast<openvdb::FloatGrid>((*grids)[0]);
    if (!grid) return info;
    info.name = grid->getName();
    info.grid_class = openvdb::GridBase::gridClassToString(grid->getGridClass());
    info.voxel = grid->voxelSize()[0];
    info.active = grid->activeVoxelCount();
    const openvdb::Coord ijk = grid->transform().worldToIndexNodeCentered(openvdb::Vec3d(probe[0], probe[1], probe[2]));
    info.value_at_probe = grid->getConstAccessor().getValue(ijk);
    return info;
}

SparseGrid<3> fog_to_sdf(const SparseGrid<3>& density, float iso) {
    init();
    auto fog = openvdb::FloatGrid::create(0.0f);
    fog->setTransform(openvdb::math::Transform::createLinearTransform(density.layout.voxel));
    auto acc = fog->getAccessor();
    density.for_each_node([&](const std::array<int, 3>& i, float v) { acc.setValue(to_coord<3>(i), v); });
    auto sdf = openvdb::tools::fogToSdf(*fog, iso);
    SparseGrid<3> out;
    out.layout = density.layout;
    out.background = FLT_MAX;
    out.values.assign(density.values.size(), FLT_MAX);
    auto sacc = sdf->getConstAccessor();
    std::size_t k = 0;
    density.for_each_node([&](const std::array<int, 3>& i, float) {
        float v;
        if (sacc.probeValue(to_coord<3>(i), v) && std::isfinite(v)) out.values[k] = v;
        ++k;
    });
    return out;
}

namespace {
struct Particles {
    using PosType = openvdb::Vec3R;
    std::span<const Vec3> p;
    double radius;
    std::size_t size() const { return p.size(); }
    void getPos(std::size_t n, openvdb::Vec3R& x) const { x = openvdb::Vec3R(p[n][0], p[n][1], p[n][2]); }
    void getPosRad(std::size_t n, openvdb::Vec3R& x, openvdb::Real& r) const {
        getPos(n, x);
        r = radius;
    }
};
}  // namespace

std::size_t particles_to_mesh(std::span<const Vec3> positions, float radius, float voxel, double seconds[2]) {
    init();
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    auto grid = openvdb::createLevelSet<openvdb::FloatGrid>(voxel, 3.0f);
    openvdb::tools::ParticlesToLevelSet<openvdb::FloatGrid> raster(*grid);
    raster.setRmin(0.5);
    raster.rasterizeSpheres(Particles{positions, double(radius)});
    raster.finalize(true);
    const auto t1 = clock::now();
    std::vector<openvdb::Vec3s> points;
    std::vector<openvdb::Vec3I> tris;
    std::vector<openvdb::Vec4I> quads;
    openvdb::tools::volumeToMesh(*grid, points, tris, quads, 0.0);
    const auto t2 = clock::now();
    seconds[0] = std::chrono::duration<double>(t1 - t0).count();
    seconds[1] = std::chrono::duration<double>(t2 - t1).count();
    return tris.size() + 2 * quads.size();
}

template void write_level_set<2>(const std::filesystem::path&, const SparseGrid<2>&, float, const SparseGrid<2>*);
template void write_level_set<3>(const std::filesystem::path&, const SparseGrid<3>&, float, const SparseGrid<3>*);

}  // namespace eddy::vdb
