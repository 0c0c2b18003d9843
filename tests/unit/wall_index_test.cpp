// keep_inside with the walls' index (index_walls) against the plain scan of every wall: the same bits for
// every point, among hundreds of solids (boxes, balls, some turned by a motion) inside a container.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "eddy/boundary.hpp"

using namespace eddy;

namespace {

template <int D>
void expect_index_is_exact(std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::vector<Wall<D>> walls;
    std::vector<BoundaryMotion<D>> motions;
    Wall<D> tank;
    tank.lo = Vec<D>::zero();
    tank.hi = Vec<D>::filled(1.0f);
    walls.push_back(tank);
    motions.emplace_back();
    for (int i = 0; i < 300; ++i) {
        Wall<D> w;
        w.solid = true;
        Vec<D> c;
        for (int a = 0; a < D; ++a) c[a] = u(rng);
        const float s = 0.005f + 0.03f * u(rng);
        if (i % 2) {
            w.shape = Wall<D>::Shape::ball;
            w.center = c;
            w.radius = s;
        } else {
            w.lo = c - Vec<D>::filled(s);
            w.hi = c + Vec<D>::filled(s);
        }
        BoundaryMotion<D> m;
        if (i % 3 == 0) {  // turned and moved: the boxes at a pose
            m.pivot = c;
            m.angular_velocity = 2.0f;
            m.velocity[0] = 0.1f;
            w.object = static_cast<int>(motions.size());
        }
        motions.push_back(m);
        update_wall_reach(w);
        walls.push_back(w);
    }
    const float r = 0.005f;
    index_walls(walls, r);
    ASSERT_TRUE(walls.front().index);
    update_wall_poses(walls, motions, 0.3);  // rebuilds the index at the new poses
    std::vector<Wall<D>> plain = walls;
    for (auto& w : plain) w.index.reset();
    int moved = 0;
    for (int k = 0; k < 20000; ++k) {
        Vec<D> x;
        for (int a = 0; a < D; ++a) x[a] = -0.05f + 1.1f * u(rng);
        Vec<D> a = x, b = x;
        const float margin = (k % 2 ? 0.5f : 1.0f) * r;
        const bool ma = keep_inside(a, walls, margin), mb = keep_inside(b, plain, margin);
        ASSERT_EQ(ma, mb) << k;
        ASSERT_EQ(0, std::memcmp(&a, &b, sizeof(a))) << k;
        moved += ma ? 1 : 0;
    }
    EXPECT_GT(moved, 100);  // the points did meet the solids
}

}  // namespace

TEST(WallIndex, KeepInsideGivesTheBitsOfTheFullScan2D) { expect_index_is_exact<2>(7); }
TEST(WallIndex, KeepInsideGivesTheBitsOfTheFullScan3D) { expect_index_is_exact<3>(11); }
