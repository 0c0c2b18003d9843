// Checks that a viewer screenshot is not blank: at least MIN_FRACTION of its pixels are
// "fluid-coloured", i.e. saturated (max - min channel > 60 of 255: the colour map's blue, yellow and
// red, and the heightfield's water). Background, walls, wireframes and terrain are grey-ish.
// With MIN_GREY, at least that fraction must also be light grey (every channel >= 150, max - min <=
// 25): the scene's models (wall meshes, polygon outlines); the dark background, the thin wall edges
// and 2D wall particles (0.45 grey) stay below it.
// With MIN_ARROW, at least that fraction must be the load arrow's magenta (red and blue >= 170, green
// <= 140: apps/view/load_arrow.hpp, colour kArrowRgb in scene_draw.cpp), a colour the map never makes.
// Usage: eddy_png_check FILE.png MIN_FRACTION [MIN_WIDTH MIN_HEIGHT [MIN_GREY [MIN_ARROW]]]. Exit 0 if it
// passes, 1 if not.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s FILE.png MIN_FRACTION [MIN_WIDTH MIN_HEIGHT]\n", argv[0]);
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
    if (!px) {
        std::fprintf(stderr, "%s: cannot read the PNG: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    const double min_fraction = std::atof(argv[2]);
    const int min_w = argc > 3 ? std::atoi(argv[3]) : 1, min_h = argc > 4 ? std::atoi(argv[4]) : 1;
    const double min_grey = argc > 5 ? std::atof(argv[5]) : 0.0;
    const double min_arrow = argc > 6 ? std::atof(argv[6]) : 0.0;
    long fluid = 0, grey = 0, arrow = 0;
    for (long i = 0; i < long(w) * h; ++i) {
        const unsigned char* p = px + 3 * i;
        const int hi = std::max({p[0], p[1], p[2]}), lo = std::min({p[0], p[1], p[2]});
        if (hi - lo > 60) ++fluid;
        if (lo >= 150 && hi - lo <= 25) ++grey;
        if (p[0] >= 170 && p[2] >= 170 && p[1] <= 140) ++arrow;
    }
    stbi_image_free(px);
    const double frac = double(fluid) / double(long(w) * h), grey_frac = double(grey) / double(long(w) * h);
    std::printf("%s: %dx%d, %.2f%% fluid-coloured pixels (need %.2f%%), %.2f%% light grey (need %.2f%%)\n", argv[1], w, h,
                100 * frac, 100 * min_fraction, 100 * grey_frac, 100 * min_grey);
    if (w < min_w || h < min_h) {
        std::fprintf(stderr, "%s: %dx%d is smaller than %dx%d\n", argv[1], w, h, min_w, min_h);
        return 1;
    }
    const double arrow_frac = double(arrow) / double(long(w) * h);
    if (min_arrow > 0.0)
        std::printf("%s: %.3f%% load-arrow magenta (need %.3f%%)\n", argv[1], 100 * arrow_frac, 100 * min_arrow);
    return frac >= min_fraction && grey_frac >= min_grey && arrow_frac >= min_arrow ? 0 : 1;
}
