// eddy in the browser: the Session (session.hpp) as the JavaScript class Module.Session (embind). The
// buffers are views into the module's memory, valid until the next call into it: the page copies or
// uploads them at once.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "session.hpp"

namespace {

using eddy::web::Session;
using emscripten::val;

template <class T>
val view(const std::vector<T>& v) {
    return val(emscripten::typed_memory_view(v.size(), v.data()));
}

// A copy of v as a new typed array of the JavaScript side (the memory view would die with v).
template <class T>
val copied(const std::vector<T>& v, const char* type) {
    return val::global(type).new_(emscripten::typed_memory_view(v.size(), v.data()));
}

// The surface worker's call (web/page/surface_worker.js): reconstruct_page_surface of positions copied in,
// {error: "" or the one line, vertices, normals, triangles} copied out (the worker transfers them to the page).
val reconstruct_surface_js(const val& positions, double radius, bool anisotropic, double decimate_ratio) {
    val out = val::object();
    try {
        const auto mesh = eddy::web::reconstruct_page_surface(emscripten::convertJSArrayToNumberVector<float>(positions),
                                                              radius, anisotropic, decimate_ratio);
        out.set("error", std::string());
        out.set("vertices", copied(mesh.xyz, "Float32Array"));
        out.set("normals", copied(mesh.normals, "Float32Array"));
        out.set("triangles", copied(mesh.triangles, "Uint32Array"));
    } catch (const std::exception& e) {
        out.set("error", std::string("eddy: error: ") + e.what());
    }
    return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(eddy_web) {
    emscripten::function("reconstructSurface", &reconstruct_surface_js);
    emscripten::class_<Session>("Session")
        .constructor<>()
        .constructor<int>()
        .function("threads", &Session::threads)
        .function("loadBundled", &Session::load_bundled)
        .function("loadText", &Session::load_text)
        .function("clearDropped", &Session::clear_dropped)
        .function("dropFile", &Session::drop_file)
        .function("loadDropped", &Session::load_dropped)
        .function("step", &Session::step)
        .function("passes", &Session::passes)
        .function("kind", &Session::kind)
        .function("dimension", &Session::dimension)
        .function("time", &Session::time)
        .function("steps", &Session::steps)
        .function("count", &Session::count)
        .function("name", &Session::name)
        .function("method", &Session::method)
        .function("particleRadius", &Session::particle_radius)
        .function("bounds", emscripten::optional_override([](const Session& s) {
            const auto b = s.bounds();
            val a = val::array();
            for (float x : b) a.call<void>("push", x);
            return a;
        }))
        .function("refresh", &Session::refresh)
        .function("positions", emscripten::optional_override([](const Session& s) { return view(s.positions()); }))
        .function("scalars", emscripten::optional_override([](const Session& s) { return view(s.scalars()); }))
        .function("scalarMin", &Session::scalar_min)
        .function("scalarMax", &Session::scalar_max)
        .function("walls", emscripten::optional_override([](const Session& s) { return view(s.walls()); }))
        .function("wallBodies", emscripten::optional_override([](const Session& s) { return view(s.wall_bodies()); }))
        .function("wallsMove", &Session::walls_move)
        .function("gridNx", &Session::grid_nx)
        .function("gridNy", &Session::grid_ny)
        .function("gridDx", &Session::grid_dx)
        .function("terrain", emscripten::optional_override([](const Session& s) { return view(s.terrain()); }))
        .function("depth", emscripten::optional_override([](const Session& s) { return view(s.depth()); }))
        .function("reconstruct", &Session::reconstruct)
        .function("meshVertices", emscripten::optional_override([](const Session& s) { return view(s.mesh_vertices()); }))
        .function("meshNormals", emscripten::optional_override([](const Session& s) { return view(s.mesh_normals()); }))
        .function("meshTriangles", emscripten::optional_override([](const Session& s) { return view(s.mesh_triangles()); }))
        .function("setWhitewater", &Session::set_whitewater)
        .function("whitewater", &Session::whitewater)
        .function("whitewaterPoints", emscripten::optional_override([](const Session& s) { return view(s.whitewater_points()); }))
        .function("whitewaterCount", &Session::whitewater_count)
        .function("whitewaterCounts", &Session::whitewater_counts)
        .function("whitewaterRecord", &Session::whitewater_record)
        .function("solidVertices", emscripten::optional_override([](const Session& s) { return view(s.solids().xyz()); }))
        .function("solidNormals", emscripten::optional_override([](const Session& s) { return view(s.solids().normals()); }))
        .function("solidColors", emscripten::optional_override([](const Session& s) { return view(s.solids().rgba()); }))
        .function("solidTriangles", emscripten::optional_override([](const Session& s) { return view(s.solids().triangles()); }))
        .function("solidOpaqueIndices", emscripten::optional_override([](const Session& s) { return double(s.solids().opaque_indices()); }))
        .function("solidParts", emscripten::optional_override([](const Session& s) { return s.solids().parts(); }))
        .function("loads", &Session::loads)
        .function("loadArrow", emscripten::optional_override([](Session& s, int object, double reference, double width) {
            return view(s.load_arrow(object, reference, width));
        }))
        .function("stateHash", &Session::state_hash)
        .function("probes", &Session::probes)
        .function("settings", &Session::settings)
        .function("applySettings", &Session::apply_settings)
        .function("sceneDocument", &Session::scene_document)
        .function("setMouse", &Session::set_mouse)
        .function("addBlock", &Session::add_block)
        .function("useTool", &Session::use_tool)
        .function("drop", &Session::drop)
        .function("particlesFile", &Session::particles_file)
        // (page) particlesFile's bytes as a Uint8Array copy: the binary PLY is not UTF-8, a JS string would mangle it
        .function("particlesBytes", emscripten::optional_override([](const Session& s, const std::string& format) {
            const std::string b = s.particles_file(format);
            return val::global("Uint8Array").new_(emscripten::typed_memory_view(b.size(), reinterpret_cast<const unsigned char*>(b.data())));
        }))
        .class_function("settingsTables", &Session::settings_tables)
        .class_function("bundledScenes", &Session::bundled_scenes)
        .class_function("bundledModels", &Session::bundled_models);
}
