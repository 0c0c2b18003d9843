// Checks that a viewer screenshot shows a body in its colour (apps/view/bodies_view.hpp body_color):
// at least MIN_FRACTION of the pixels have the colour's hue, i.e. each channel divided by the pixel's
// largest is within 0.12 of the colour's (so shading, which scales the colour, still counts) and the
// pixel is not dark (largest channel >= 40 of 255). The fluid's colour map (blue -> yellow -> red), the
// walls' greys and the background match none of the bodies' palette.
// Usage: eddy_png_color FILE.png R G B MIN_FRACTION (R, G, B in 0..1). Exit 0 if it passes, 1 if not,
// 2 on bad arguments.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s FILE.png R G B MIN_FRACTION\n", argv[0]);
        return 2;
    }
    const double c[3] = {std::atof(argv[2]), std::atof(argv[3]), std::atof(argv[4])};
    const double min_fraction = std::atof(argv[5]);
    const double cmax = std::max({c[0], c[1], c[2]});
    if (!(cmax > 0.0)) {
        std::fprintf(stderr, "%s: the colour must not be black\n", argv[0]);
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
    if (!px) {
        std::fprintf(stderr, "%s: cannot read the PNG: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    long match = 0;
    for (long i = 0; i < long(w) * h; ++i) {
        const unsigned char* p = px + 3 * i;
        const int hi = std::max({p[0], p[1], p[2]});
        if (hi < 40) continue;
        bool ok = true;
        for (int k = 0; k < 3 && ok; ++k) ok = std::fabs(double(p[k]) / hi - c[k] / cmax) <= 0.12;
        if (ok) ++match;
    }
    stbi_image_free(px);
    const double frac = double(match) / double(long(w) * h);
    std::printf("%s: %dx%d, %.3f%% pixels of colour (%.2f, %.2f, %.2f) (need %.3f%%)\n", argv[1], w, h, 100 * frac, c[0], c[1],
                c[2], 100 * min_fraction);
    return frac >= min_fraction ? 0 : 1;
}
