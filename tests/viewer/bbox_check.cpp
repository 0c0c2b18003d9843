// Prints the bounding box of a screenshot's grey pixels (the walls: 2D wall particles, 3D wall edges):
// every channel >= MIN_LEVEL (of 255) and max - min channel <= MAX_SPREAD. The dark background, the
// colour maps' saturated colours and (with MIN_LEVEL above ~40) the shadows stay out.
// Usage: eddy_png_bbox FILE.png MIN_LEVEL MAX_SPREAD. Prints "x0 y0 x1 y1 W H count" (pixels, inclusive;
// -1s when none) and exits 0; 1 when the file cannot be read, 2 on bad arguments.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#include <stb/stb_image.h>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s FILE.png MIN_LEVEL MAX_SPREAD\n", argv[0]);
        return 2;
    }
    const int level = std::atoi(argv[2]), spread = std::atoi(argv[3]);
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
    if (!px) {
        std::fprintf(stderr, "%s: cannot read the PNG: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    long count = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const unsigned char* p = px + 3 * (long(y) * w + x);
            const int hi = std::max({p[0], p[1], p[2]}), lo = std::min({p[0], p[1], p[2]});
            if (lo < level || hi - lo > spread) continue;
            x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
            ++count;
        }
    stbi_image_free(px);
    if (count == 0) x0 = y0 = -1;
    std::printf("%d %d %d %d %d %d %ld\n", x0, y0, x1, y1, w, h, count);
    return 0;
}
