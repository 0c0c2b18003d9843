#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

#include "eddy/render.hpp"

using namespace eddy;
namespace fs = std::filesystem;

namespace {

struct Picture {
    int w = 0, h = 0;
    std::vector<unsigned char> rgb;
    std::string bytes;
};

Picture load(const fs::path& p) {
    Picture pic;
    std::stringstream ss;
    ss << std::ifstream(p, std::ios::binary).rdbuf();
    pic.bytes = ss.str();
    int n = 0;
    unsigned char* d = stbi_load_from_memory(reinterpret_cast<const unsigned char*>(pic.bytes.data()),
                                             static_cast<int>(pic.bytes.size()), &pic.w, &pic.h, &n, 3);
    if (d) pic.rgb.assign(d, d + std::size_t(pic.w) * pic.h * 3);
    stbi_image_free(d);
    return pic;
}

// Pixels that are clearly fluid-coloured (blue to red, saturated), not background or grey walls.
double fluid_fraction(const Picture& p) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < p.rgb.size(); i += 3) {
        const int r = p.rgb[i], g = p.rgb[i + 1], b = p.rgb[i + 2];
        const int mx = std::max({r, g, b}), mn = std::min({r, g, b});
        n += (mx > 90 && mx - mn > 60);
    }
    return double(n) / double(p.rgb.size() / 3);
}

template <int D>
ParticleSet<D> block(int side, float r, float speed) {
    ParticleSet<D> p;
    for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j)
            for (int k = 0; k < (D == 3 ? side : 1); ++k) {
                Vec<D> x, v = Vec<D>::zero();
                x[0] = (2 * i + 1) * r;
                x[1] = (2 * j + 1) * r;
                if constexpr (D == 3) x[2] = (2 * k + 1) * r;
                v[0] = speed * i / side;
                p.push_back(x, v);
            }
    return p;
}

}  // namespace

TEST(Render, SpeedColourGoesBlueYellowRed) {
    const Vec3 slow = speed_color(0.0f, 1.0f), mid = speed_color(1.0f, 1.0f), fast = speed_color(5.0f, 1.0f);
    EXPECT_GT(slow[2], slow[0]);
    EXPECT_GT(mid[0], 0.9f);
    EXPECT_GT(mid[1], 0.8f);
    EXPECT_GT(fast[0], 0.85f);
    EXPECT_LT(fast[1], 0.15f);
}

TEST(Render, PicturesIn2DAnd3DShowTheFluidAndAreDeterministic) {
    const fs::path dir = fs::temp_directory_path() / "eddy_render_test";
    fs::create_directories(dir);
    const float r = 0.01f;
    {
        const auto p = block<2>(40, r, 2.0f);
        BoundarySet<2> b;
        for (int i = -2; i < 90; ++i) b.push_back(Vec2{{i * 2 * r, -r}}, 0);
        Aabb<2> box{Vec2{{0, 0}}, Vec2{{1.6f, 0.9f}}};
        RenderSettings rs;
        rs.width = 320;
        rs.height = 180;
        render_png(dir / "a.png", p, &b, box, r, rs);
        render_png(dir / "b.png", p, &b, box, r, rs);
        const Picture a = load(dir / "a.png"), c = load(dir / "b.png");
        ASSERT_EQ(a.w, 320);
        ASSERT_EQ(a.h, 180);
        EXPECT_GT(fluid_fraction(a), 0.05);
        EXPECT_EQ(a.bytes, c.bytes);
    }
    {
        const auto p = block<3>(20, r, 2.0f);
        Aabb<3> box{Vec3{{0, 0, 0}}, Vec3{{0.4f, 0.4f, 0.4f}}};
        RenderSettings rs;
        rs.width = 320;
        rs.height = 240;
        render_png(dir / "c.png", p, static_cast<const BoundarySet<3>*>(nullptr), box, r, rs);
        const Picture a = load(dir / "c.png");
        ASSERT_EQ(a.w, 320);
        EXPECT_GT(fluid_fraction(a), 0.05);
        // Shaded: the fluid is not one flat colour.
        std::set<int> shades;
        for (std::size_t i = 0; i < a.rgb.size(); i += 3) shades.insert(a.rgb[i] * 65536 + a.rgb[i + 1] * 256 + a.rgb[i + 2]);
        EXPECT_GT(shades.size(), 100u);
    }
    fs::remove_all(dir);
}
