// eddy's page: the 3D surface rebuilt off the page's thread (issue 43; docs/web.md, "The surface"). A second
// instance of the module (eddy.js, the same build) in a Web Worker: the page posts the particles' positions
// (copied, transferred), the worker runs reconstruct_page_surface, the function the page's own
// Session::reconstruct runs, and transfers the mesh back. Playing and dragging go on meanwhile.
importScripts('eddy.js');
const ready = createEddy({ print: () => {}, printErr: (t) => console.warn(t) });
onmessage = async (e) => {
    const { id, load, positions, radius, anisotropic, decimate } = e.data;
    let M;
    try {
        M = await ready;
    } catch (err) {
        postMessage({ id, load, error: `eddy: error: the surface worker's module did not load: ${err && err.message ? err.message : err}` });
        return;
    }
    const r = M.reconstructSurface(positions, radius, anisotropic, decimate);
    if (r.error) { postMessage({ id, load, error: r.error }); return; }
    postMessage({ id, load, error: '', vertices: r.vertices, normals: r.normals, triangles: r.triangles },
        [r.vertices.buffer, r.normals.buffer, r.triangles.buffer]);
};
