// The model fuzz targets' shared step (fuzz_model_obj, _stl, _ply, _gltf): the input as a model file of
// the given name, read from memory as eddy run reads a scene's model (read_triangle_mesh's header and
// PLY body checks, assimp through eddy's I/O system, index checks, placement, welding), then cleaned
// and put in a BVH (MeshShape) as scenes do. No file is written: side files the input names are not
// found, so a glTF's external buffer or an OBJ's mtllib is "missing".
#pragma once
#include <string>

#include "eddy/geometry.hpp"
#include "fuzz_support.hpp"

namespace eddy::fuzz {

inline int read_model(const std::uint8_t* data, std::size_t size, const char* name) {
    return expect_clean([&] {
        Mesh<3> m = read_triangle_mesh_from_memory(std::string(reinterpret_cast<const char*>(data), size), name);
        const MeshShape<3> shape(std::move(m), name);
        (void)shape.inside(Vec3{{0.25f, 0.25f, 0.25f}});
    });
}

}  // namespace eddy::fuzz
