// eddy in the browser: WebGL2 drawing (docs/web.md, "The page"). The native viewer's shaders
// (apps/view/gfx.cpp) ported to GLSL ES 3.00: one draw of points for the particles (flat discs with a
// darker rim in 2D, sphere impostors with their true depth and Blinn-Phong in 3D), flat lines (the
// bounds' wire box), and one lit mesh program for the reconstructed surface and the shallow-water
// heightfield (terrain opaque, water translucent). The colour maps are the viewer's
// (apps/view/coloring.cpp): 17 stops, linear in between, the same table in the shader and the legend.
// 2D bodies (setWalls' second argument) are filled in their own colours over the fluid, as `eddy run
// --render` draws them (src/render/render.cpp).

// ---- colour maps --------------------------------------------------------------------------------------
const STOPS = 17;
function resample(anchors) {
    const t = [];
    for (let k = 0; k < STOPS; ++k) {
        const x = k / (STOPS - 1) * (anchors.length - 1);
        const i = Math.min(Math.floor(x), anchors.length - 2), f = x - i;
        for (let c = 0; c < 3; ++c) t.push(anchors[i][c] + (anchors[i + 1][c] - anchors[i][c]) * f);
    }
    return new Float32Array(t);
}
export const COLORMAPS = {
    // seed 003's map, eddy::speed_color's: blue -> yellow -> red
    classic: resample([[0.10, 0.30, 0.90], [1.0, 0.85, 0.10], [0.90, 0.10, 0.10]]),
    viridis: new Float32Array([
        0.2670, 0.0049, 0.3294, 0.2823, 0.0950, 0.4173, 0.2788, 0.1755, 0.4834, 0.2590, 0.2515, 0.5247,
        0.2297, 0.3224, 0.5457, 0.1994, 0.3876, 0.5546, 0.1727, 0.4488, 0.5579, 0.1490, 0.5081, 0.5573,
        0.1276, 0.5669, 0.5506, 0.1206, 0.6258, 0.5335, 0.1579, 0.6838, 0.5017, 0.2461, 0.7389, 0.4520,
        0.3692, 0.7889, 0.3829, 0.5160, 0.8312, 0.2943, 0.6785, 0.8637, 0.1895, 0.8456, 0.8873, 0.0997,
        0.9932, 0.9062, 0.1439]),
    coolwarm: new Float32Array([
        0.2298, 0.2987, 0.7537, 0.3042, 0.4069, 0.8453, 0.3837, 0.5102, 0.9178, 0.4677, 0.6056, 0.9685,
        0.5543, 0.6901, 0.9955, 0.6408, 0.7608, 0.9978, 0.7240, 0.8149, 0.9757, 0.8006, 0.8504, 0.9300,
        0.8674, 0.8644, 0.8626, 0.9256, 0.8255, 0.7711, 0.9595, 0.7670, 0.6741, 0.9697, 0.6905, 0.5751,
        0.9567, 0.5980, 0.4773, 0.9214, 0.4914, 0.3834, 0.8654, 0.3711, 0.2958, 0.7906, 0.2314, 0.2162,
        0.7057, 0.0156, 0.1502]),
    // deep water blue at rest through sky blue to white foam
    speed: resample([[0.03, 0.12, 0.40], [0.10, 0.40, 0.85], [0.55, 0.80, 1.00], [1.0, 1.0, 1.0]]),
};
/// A CSS linear-gradient of a map (the legend).
export function cssGradient(name) {
    const t = COLORMAPS[name] || COLORMAPS.classic, parts = [];
    for (let k = 0; k < STOPS; ++k)
        parts.push(`rgb(${Math.round(255 * t[3 * k])},${Math.round(255 * t[3 * k + 1])},${Math.round(255 * t[3 * k + 2])}) ${(100 * k / (STOPS - 1)).toFixed(1)}%`);
    return `linear-gradient(to right, ${parts.join(', ')})`;
}

// ---- bodies ---------------------------------------------------------------------------------------------
/// The bodies' colours, one per body in turn: the viewer's palette (apps/view/bodies_view.cpp body_color).
export const BODY_COLORS = [[0.20, 0.80, 0.30], [0.62, 0.38, 0.92], [0.10, 0.72, 0.72], [0.65, 0.90, 0.20],
    [0.95, 0.55, 0.78], [0.60, 0.42, 0.26]];

/// A 2D body's particles (xyz[3 k], xyz[3 k + 1] for k in ks) as a triangle fan (x, y, 0 a vertex): their
/// centroid, then the farthest particle in each of ks.length / 2 equal angles about it, and the first of
/// those again. A body is sampled by layers of particles under its surface, its inside empty: the fan fills
/// it, exactly for shapes every ray from the centroid leaves once (boxes, circles, convex polygons); the
/// particles' discs drawn over it cover the rim's steps.
/// Spray, foam and bubbles (whitewater types 0, 1, 2): the viewer's colours (apps/view/whitewater_view.hpp).
export const DIFFUSE_RGB = [[1.0, 1.0, 1.0], [0.78, 0.84, 0.93], [0.66, 0.95, 1.0]];
export const DIFFUSE_RADII = 0.4;  // drawn radius, in particle radii
export const ARROW_RGB = [1.0, 0.3, 0.85];  // the load arrow: the viewer's magenta, in no colour map

export function bodyFan(xyz, ks) {
    let cx = 0, cy = 0;
    for (const k of ks) { cx += xyz[3 * k]; cy += xyz[3 * k + 1]; }
    cx /= Math.max(ks.length, 1); cy /= Math.max(ks.length, 1);
    const bins = Math.max(8, ks.length >> 1), far = new Array(bins).fill(-1), dist = new Float64Array(bins);
    for (const k of ks) {
        const dx = xyz[3 * k] - cx, dy = xyz[3 * k + 1] - cy, d = dx * dx + dy * dy;
        const b = Math.min(bins - 1, Math.floor((Math.atan2(dy, dx) + Math.PI) / (2 * Math.PI) * bins));
        if (far[b] < 0 || d > dist[b]) { far[b] = k; dist[b] = d; }
    }
    const rim = far.filter((k) => k >= 0), out = new Float32Array(3 * (rim.length + 2));
    out[0] = cx; out[1] = cy;
    rim.push(rim[0]);
    rim.forEach((k, i) => { out[3 * i + 3] = xyz[3 * k]; out[3 * i + 4] = xyz[3 * k + 1]; });
    return out;
}

// ---- small matrices (column-major, as GL wants them) ---------------------------------------------------
export const mat4 = {
    mul(a, b) {
        const r = new Float32Array(16);
        for (let i = 0; i < 4; ++i)
            for (let j = 0; j < 4; ++j) {
                let s = 0;
                for (let k = 0; k < 4; ++k) s += a[k * 4 + i] * b[j * 4 + k];
                r[j * 4 + i] = s;
            }
        return r;
    },
    identity() { return new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]); },
    ortho(l, r, b, t, n, f) {
        const m = mat4.identity();
        m[0] = 2 / (r - l); m[5] = 2 / (t - b); m[10] = -2 / (f - n);
        m[12] = -(r + l) / (r - l); m[13] = -(t + b) / (t - b); m[14] = -(f + n) / (f - n);
        return m;
    },
    perspective(fovy, aspect, n, f) {
        const t = 1 / Math.tan(0.5 * fovy), m = new Float32Array(16);
        m[0] = t / aspect; m[5] = t; m[10] = (f + n) / (n - f); m[11] = -1; m[14] = 2 * f * n / (n - f);
        return m;
    },
    lookAt(eye, target, up) {
        const f = norm(sub(target, eye)), s = norm(cross(f, up)), u = cross(s, f), m = mat4.identity();
        m[0] = s[0]; m[4] = s[1]; m[8] = s[2];
        m[1] = u[0]; m[5] = u[1]; m[9] = u[2];
        m[2] = -f[0]; m[6] = -f[1]; m[10] = -f[2];
        m[12] = -dot(s, eye); m[13] = -dot(u, eye); m[14] = dot(f, eye);
        return m;
    },
};
export const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export function norm(a) { const l = Math.hypot(a[0], a[1], a[2]); return l > 0 ? scale(a, 1 / l) : [0, 0, 1]; }

// ---- cameras ------------------------------------------------------------------------------------------
/// 2D: an orthographic view of the world rectangle x0..x1, y0..y1, grown to the canvas's aspect.
export class Camera2D {
    constructor() { this.x0 = 0; this.y0 = 0; this.x1 = 1; this.y1 = 1; }
    frame(lo, hi, margin = 0.04) {
        const mx = margin * (hi[0] - lo[0]), my = margin * (hi[1] - lo[1]), m = Math.max(mx, my);
        this.x0 = lo[0] - m; this.x1 = hi[0] + m; this.y0 = lo[1] - m; this.y1 = hi[1] + m;
    }
    rect(aspect) {
        let w = this.x1 - this.x0, h = this.y1 - this.y0;
        const cx = 0.5 * (this.x0 + this.x1), cy = 0.5 * (this.y0 + this.y1);
        if (w / h < aspect) w = h * aspect; else h = w / aspect;
        return [cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h];
    }
    view() { return mat4.identity(); }
    proj(aspect) { const r = this.rect(aspect); return mat4.ortho(r[0], r[2], r[1], r[3], -1, 1); }
    /// The world point under pixel (px, py) of a w x h canvas (origin top left).
    world(px, py, w, h) {
        const r = this.rect(w / Math.max(h, 1));
        return [r[0] + (px / w) * (r[2] - r[0]), r[3] - (py / h) * (r[3] - r[1]), 0];
    }
    /// World units per pixel.
    pixel(w, h) { const r = this.rect(w / Math.max(h, 1)); return (r[2] - r[0]) / w; }
    zoom(factor, px, py, w, h) {
        const p = this.world(px, py, w, h);
        this.x0 = p[0] + (this.x0 - p[0]) * factor; this.x1 = p[0] + (this.x1 - p[0]) * factor;
        this.y0 = p[1] + (this.y0 - p[1]) * factor; this.y1 = p[1] + (this.y1 - p[1]) * factor;
    }
    pan(dxPx, dyPx, w, h) {
        const k = this.pixel(w, h);
        this.x0 -= dxPx * k; this.x1 -= dxPx * k; this.y0 += dyPx * k; this.y1 += dyPx * k;
    }
}

/// 3D: the viewer's orbit camera (apps/view/camera.cpp): yaw, pitch and distance about a target, y up.
export class OrbitCamera {
    constructor() { this.target = [0, 0, 0]; this.yaw = 0.6; this.pitch = 0.45; this.distance = 3; this.fov = 40; }
    eye() {
        const cp = Math.cos(this.pitch);
        return add(this.target, scale([cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)], this.distance));
    }
    /// Looks at the box [lo, hi] from the current direction, the whole box in view.
    frame(lo, hi, aspect) {
        // the nearest distance at which every corner is inside the view (with a 6% margin)
        this.target = scale(add(lo, hi), 0.5);
        const cp = Math.cos(this.pitch);
        const back = [cp * Math.sin(this.yaw), Math.sin(this.pitch), cp * Math.cos(this.yaw)];
        const s = norm(cross(scale(back, -1), [0, 1, 0])), up = cross(s, scale(back, -1));
        const ty = Math.tan(0.5 * this.fov * Math.PI / 180) * 0.94, tx = ty * Math.max(aspect, 1e-3);
        let d = 1e-4;
        for (let k = 0; k < 8; ++k) {
            const q = sub([(k & 1) ? hi[0] : lo[0], (k & 2) ? hi[1] : lo[1], (k & 4) ? hi[2] : lo[2]], this.target);
            const Z = dot(q, back);
            d = Math.max(d, Z + Math.abs(dot(q, s)) / tx, Z + Math.abs(dot(q, up)) / ty);
        }
        this.distance = d;
    }
    /// From a scene's camera (eye, target, fov in degrees).
    fromEye(eye, target, fov) {
        const d = sub(eye, target), r = Math.hypot(d[0], d[1], d[2]);
        if (!(r > 0)) return;
        this.target = target.slice();
        this.distance = r;
        this.pitch = Math.asin(Math.max(-1, Math.min(1, d[1] / r)));
        this.yaw = Math.atan2(d[0], d[2]);
        if (fov > 0 && fov < 180) this.fov = fov;
    }
    view() { return mat4.lookAt(this.eye(), this.target, [0, 1, 0]); }
    proj(aspect) { return mat4.perspective(this.fov * Math.PI / 180, aspect, 0.01 * this.distance, 100 * this.distance); }
    /// The ray through pixel (px, py) of a w x h canvas: [origin, unit direction].
    ray(px, py, w, h) {
        const aspect = w / Math.max(h, 1), u = 2 * (px + 0.5) / w - 1, v = 1 - 2 * (py + 0.5) / h;
        const e = this.eye(), f = norm(sub(this.target, e)), s = norm(cross(f, [0, 1, 0])), up = cross(s, f);
        const t = Math.tan(0.5 * this.fov * Math.PI / 180);
        return [e, norm(add(f, add(scale(s, u * t * aspect), scale(up, v * t))))];
    }
    orbit(dxPx, dyPx) {
        this.yaw -= dxPx * 0.008;
        this.pitch = Math.max(-1.55, Math.min(1.55, this.pitch + dyPx * 0.008));
    }
}

/// Where the ray (o, d) meets the plane through p0 with normal n, in front of o; null if it does not.
export function intersectPlane(o, d, p0, n) {
    const den = dot(d, n);
    if (Math.abs(den) < 1e-6) return null;
    const t = dot(sub(p0, o), n) / den;
    return t > 0 ? add(o, scale(d, t)) : null;
}

// ---- shaders ------------------------------------------------------------------------------------------
const HEAD = '#version 300 es\nprecision highp float;\nprecision highp int;\n';
const CMAP = `
uniform vec3 u_cmap[17];
vec3 cmap(float s) {
    float x = clamp(s, 0.0, 1.0) * 16.0;
    int i = min(int(x), 15);
    return mix(u_cmap[i], u_cmap[i + 1], x - float(i));
}
`;
const PARTICLE_VS = `
layout(location = 1) in vec3 center;
layout(location = 2) in float scalar;
uniform mat4 u_view, u_proj;
uniform float u_radius;
uniform vec2 u_range;
uniform int u_flat;
uniform vec3 u_flat_rgb;
uniform float u_viewport_h;   // pixels
uniform float u_max_point;
out vec3 v_color;
out vec3 v_center;
void main() {
    vec4 c = u_view * vec4(center, 1.0);
    float s = (scalar - u_range.x) / max(u_range.y - u_range.x, 1e-20);
    if (isnan(scalar)) s = 1.0;
    v_color = u_flat == 1 ? u_flat_rgb : cmap(s);
    v_center = c.xyz;
    gl_Position = u_proj * c;
    // the disc's diameter in pixels (orthographic: w = 1)
    gl_PointSize = clamp(u_radius * u_proj[1][1] * u_viewport_h / gl_Position.w, 1.0, u_max_point);
}
`;
const PARTICLE_FS = `
in vec3 v_color;
in vec3 v_center;
uniform mat4 u_proj;
uniform float u_radius;
uniform int u_sphere;
uniform float u_rim;
out vec4 frag;
void main() {
    vec2 v_uv = vec2(2.0 * gl_PointCoord.x - 1.0, 1.0 - 2.0 * gl_PointCoord.y);
    float r2 = dot(v_uv, v_uv);
    if (r2 > 1.0) discard;
    if (u_sphere == 0) {   // 2D: a flat disc with a darker rim
        frag = vec4(v_color * (1.0 - u_rim * smoothstep(0.6, 1.0, r2)), 1.0);
        return;
    }
    // Sphere impostor: the sphere's normal under this fragment, its true depth, Blinn-Phong.
    vec3 n = vec3(v_uv, sqrt(1.0 - r2));
    vec3 p = v_center + n * u_radius;
    vec4 clip = u_proj * vec4(p, 1.0);
    gl_FragDepth = 0.5 * clip.z / clip.w + 0.5;
    vec3 L = normalize(vec3(0.4, 0.8, 0.5));
    vec3 V = normalize(-p);
    vec3 H = normalize(L + V);
    float diff = max(dot(n, L), 0.0);
    float spec = pow(max(dot(n, H), 0.0), 48.0);
    frag = vec4(v_color * (0.3 + 0.7 * diff) + vec3(0.3) * spec, 1.0);
}
`;
const LINE_VS = `
layout(location = 0) in vec3 pos;
uniform mat4 u_view, u_proj;
void main() { gl_Position = u_proj * u_view * vec4(pos, 1.0); }
`;
const LINE_FS = `
uniform vec4 u_rgba;
out vec4 frag;
void main() { frag = u_rgba; }
`;
const MESH_VS = `
layout(location = 0) in vec3 pos;
layout(location = 1) in vec3 normal;
layout(location = 2) in vec4 color;
uniform mat4 u_view, u_proj;
out vec3 v_pos;
out vec3 v_normal;
out vec4 v_color;
void main() {
    v_pos = pos;
    v_normal = normal;
    v_color = color;
    gl_Position = u_proj * u_view * vec4(pos, 1.0);
}
`;
const MESH_FS = `
in vec3 v_pos;
in vec3 v_normal;
in vec4 v_color;
uniform vec3 u_eye;
uniform float u_shininess;
out vec4 frag;
void main() {
    if (v_color.a < 0.01) discard;
    vec3 n = normalize(v_normal);
    vec3 V = normalize(u_eye - v_pos);
    if (dot(n, V) < 0.0) n = -n;  // lit from both sides
    vec3 L = normalize(vec3(0.3, 1.0, 0.4));
    vec3 H = normalize(L + V);
    float diff = max(dot(n, L), 0.0);
    float spec = u_shininess > 0.0 ? pow(max(dot(n, H), 0.0), u_shininess) : 0.0;
    frag = vec4(v_color.rgb * (0.35 + 0.65 * diff) + vec3(0.5) * spec, v_color.a);
}
`;

function compile(gl, type, src) {
    const s = gl.createShader(type);
    gl.shaderSource(s, src);
    gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error('shader compilation failed: ' + gl.getShaderInfoLog(s));
    return s;
}
// A float buffer fed to attribute `loc`, `size` floats a vertex (bound to the current vertex array).
function vertexBuffer(gl, loc, size) {
    const b = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, b);
    gl.enableVertexAttribArray(loc);
    gl.vertexAttribPointer(loc, size, gl.FLOAT, false, 0, 0);
    return b;
}

function program(gl, vs, fs) {
    const p = gl.createProgram();
    gl.attachShader(p, compile(gl, gl.VERTEX_SHADER, HEAD + CMAP + vs));
    gl.attachShader(p, compile(gl, gl.FRAGMENT_SHADER, HEAD + fs));
    gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error('shader link failed: ' + gl.getProgramInfoLog(p));
    const u = {};
    const n = gl.getProgramParameter(p, gl.ACTIVE_UNIFORMS);
    for (let i = 0; i < n; ++i) {
        const name = gl.getActiveUniform(p, i).name.replace(/\[0\]$/, '');
        u[name] = gl.getUniformLocation(p, name);
    }
    return { p, u };
}

// ---- the renderer -------------------------------------------------------------------------------------
export class Renderer {
    constructor(canvas) {
        // preserveDrawingBuffer: the PNG download reads the canvas at any time. Multisampling, unless
        // the GL is a software one (SwiftShader: Chromium without a GPU), where it costs more than it
        // gives: then the canvas is replaced by a fresh one (a canvas keeps its first context).
        let gl = canvas.getContext('webgl2', { antialias: true, preserveDrawingBuffer: true });
        if (!gl) throw new Error('WebGL2 is not available in this browser');
        const info = gl.getExtension('WEBGL_debug_renderer_info');
        const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
        this.software = /swiftshader|llvmpipe|software/i.test(name);
        this.rendererName = name;
        if (this.software) {
            const fresh = canvas.cloneNode(false);
            canvas.replaceWith(fresh);
            canvas = fresh;
            gl = canvas.getContext('webgl2', { antialias: false, preserveDrawingBuffer: true });
        }
        this.canvas = canvas;
        this.gl = gl;
        this.particle = program(gl, PARTICLE_VS, PARTICLE_FS);
        this.line = program(gl, LINE_VS, LINE_FS);
        this.mesh = program(gl, MESH_VS, MESH_FS);

        // particles: one point each (centre and scalar); the point sprite is the disc or the sphere's
        // impostor. Points, not instanced quads: SwiftShader (Chromium without a GPU) draws instances
        // one by one (6,100 quads: 11 frames per second; as points: 60).
        this.maxPoint = gl.getParameter(gl.ALIASED_POINT_SIZE_RANGE)[1] || 64;
        this.pvao = gl.createVertexArray();
        gl.bindVertexArray(this.pvao);
        this.pxyz = vertexBuffer(gl, 1, 3);
        this.pscalar = vertexBuffer(gl, 2, 1);
        this.pcount = 0;

        // whitewater: spray, foam and bubbles, grouped by type (dcounts), each drawn flat in its colour
        this.dvao = gl.createVertexArray();
        gl.bindVertexArray(this.dvao);
        this.dxyz = vertexBuffer(gl, 1, 3);
        this.dcounts = [0, 0, 0];

        // walls: their own centres, no scalar (a constant attribute); the walls' particles first, then
        // each body's (bodyGroups: first, count, colour and its fan's first vertex and count in fvao)
        this.wvao = gl.createVertexArray();
        gl.bindVertexArray(this.wvao);
        this.wxyz = vertexBuffer(gl, 1, 3);
        this.wcount = 0;
        this.bodyGroups = [];
        this.fvao = gl.createVertexArray();
        gl.bindVertexArray(this.fvao);
        this.fbuf = vertexBuffer(gl, 0, 3);

        // 3D solids (bodies, models, obstacles): positions, normals, colours per vertex, triangles; the
        // opaque ones first (oindices of them), then the translucent
        this.ovao = gl.createVertexArray();
        gl.bindVertexArray(this.ovao);
        this.opos = vertexBuffer(gl, 0, 3);
        this.onrm = vertexBuffer(gl, 1, 3);
        this.orgba = vertexBuffer(gl, 2, 4);
        this.oibo = gl.createBuffer();
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.oibo);
        this.oindices = 0; this.oopaque = 0;

        // the load arrow: line segments (3D) or triangles (2D), magenta (the viewer's)
        this.avao = gl.createVertexArray();
        gl.bindVertexArray(this.avao);
        this.abuf = vertexBuffer(gl, 0, 3);
        this.acount = 0;
        this.atriangles = false;

        // lines
        this.lvao = gl.createVertexArray();
        gl.bindVertexArray(this.lvao);
        this.lbuf = vertexBuffer(gl, 0, 3);
        this.lcount = 0;

        // the surface: positions, normals, triangles; a constant colour
        this.svao = gl.createVertexArray();
        gl.bindVertexArray(this.svao);
        this.spos = vertexBuffer(gl, 0, 3);
        this.snrm = vertexBuffer(gl, 1, 3);
        this.sibo = gl.createBuffer();
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.sibo);
        this.sindices = 0;

        // heightfield: terrain and water, 10 floats a vertex (x y z, normal, rgba), shared indices
        this.hibo = gl.createBuffer();
        this.hterrain = gl.createBuffer();
        this.hwater = gl.createBuffer();
        const hvao = (buf) => {
            const vao = gl.createVertexArray();
            gl.bindVertexArray(vao);
            gl.bindBuffer(gl.ARRAY_BUFFER, buf);
            gl.enableVertexAttribArray(0);
            gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 40, 0);
            gl.enableVertexAttribArray(1);
            gl.vertexAttribPointer(1, 3, gl.FLOAT, false, 40, 12);
            gl.enableVertexAttribArray(2);
            gl.vertexAttribPointer(2, 4, gl.FLOAT, false, 40, 24);
            gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.hibo);
            return vao;
        };
        this.tvao = hvao(this.hterrain);
        this.hvao = hvao(this.hwater);
        // the grid's four sides ("skirts": terrain from a base up, water from the terrain up), so that
        // a channel seen from its side shows its profile
        this.sterrain = gl.createBuffer();
        this.swater = gl.createBuffer();
        this.stvao = hvao(this.sterrain);
        this.swvao = hvao(this.swater);
        this.skirtSides = [];
        this.hindices = 0;
        this.hnx = 0; this.hny = 0;
        this.hscratch = null;
        gl.bindVertexArray(null);
    }

    /// Matches the drawing buffer to the canvas's size on the page; true when it changed.
    resize() {
        const dpr = Math.min(window.devicePixelRatio || 1, 2);
        const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr)), h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
        if (this.canvas.width === w && this.canvas.height === h) return false;
        this.canvas.width = w; this.canvas.height = h;
        return true;
    }

    setParticles(xyz, scalars) {
        const gl = this.gl;
        gl.bindBuffer(gl.ARRAY_BUFFER, this.pxyz);
        gl.bufferData(gl.ARRAY_BUFFER, xyz, gl.STREAM_DRAW);
        gl.bindBuffer(gl.ARRAY_BUFFER, this.pscalar);
        gl.bufferData(gl.ARRAY_BUFFER, scalars, gl.STREAM_DRAW);
        this.pcount = Math.min(xyz.length / 3, scalars.length);
    }
    /// Whitewater points (x, y, z each): counts[0] spray first, then counts[1] foam, then counts[2] bubbles;
    /// null clears them.
    setDiffuse(xyz, counts) {
        const gl = this.gl;
        this.dcounts = xyz && counts ? counts.slice(0, 3) : [0, 0, 0];
        if (!xyz) return;
        gl.bindBuffer(gl.ARRAY_BUFFER, this.dxyz);
        gl.bufferData(gl.ARRAY_BUFFER, xyz, gl.STREAM_DRAW);
    }
    /// 3D solids as shaded meshes: vertices, normals, colours (rgba) per vertex, triangles (Uint32Array), the
    /// first `opaque` indices opaque; null clears them.
    setSolids(xyz, normals, rgba, triangles, opaque) {
        const gl = this.gl;
        this.oindices = xyz && triangles ? triangles.length : 0;
        this.oopaque = Math.min(opaque || 0, this.oindices);
        if (!this.oindices) return;
        gl.bindVertexArray(this.ovao);
        for (const [b, data] of [[this.opos, xyz], [this.onrm, normals], [this.orgba, rgba]]) {
            gl.bindBuffer(gl.ARRAY_BUFFER, b);
            gl.bufferData(gl.ARRAY_BUFFER, data, gl.STREAM_DRAW);
        }
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.oibo);
        gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, triangles, gl.STREAM_DRAW);
        gl.bindVertexArray(null);
    }
    /// The lit mesh program with the camera's matrices and eye, and a shininess (0: matte).
    useMesh(view, proj, eye, shininess) {
        const gl = this.gl, m = this.mesh;
        gl.useProgram(m.p);
        gl.uniformMatrix4fv(m.u.u_view, false, view);
        gl.uniformMatrix4fv(m.u.u_proj, false, proj);
        gl.uniform3fv(m.u.u_eye, eye);
        gl.uniform1f(m.u.u_shininess, shininess);
    }
    /// The solids' opaque triangles (before the particles) or translucent ones (after them, blended, not
    /// writing depth), with the mesh program.
    drawSolids(view, proj, eye, translucent) {
        const gl = this.gl;
        const first = translucent ? this.oopaque : 0, count = translucent ? this.oindices - this.oopaque : this.oopaque;
        if (count <= 0) return;
        this.useMesh(view, proj, eye, 32);
        gl.bindVertexArray(this.ovao);
        if (translucent) { gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false); }
        gl.drawElements(gl.TRIANGLES, count, gl.UNSIGNED_INT, 4 * first);
        if (translucent) { gl.depthMask(true); gl.disable(gl.BLEND); }
    }
    /// The load arrow: x, y, z per vertex, triangles (2D) or line segments; null clears it.
    setArrow(xyz, triangles) {
        const gl = this.gl;
        this.acount = xyz ? xyz.length / 3 : 0;
        this.atriangles = !!triangles;
        if (!this.acount) return;
        gl.bindBuffer(gl.ARRAY_BUFFER, this.abuf);
        gl.bufferData(gl.ARRAY_BUFFER, xyz, gl.STREAM_DRAW);
    }
    /// Wall particles (x, y, z each). bodies (optional, one per particle): the body a particle belongs to
    /// (0, 1, ...), or -1 for a wall's; the bodies are drawn filled in their colours (2D).
    setWalls(xyz, bodies) {
        const gl = this.gl, n = xyz.length / 3, groups = new Map(), walls = [];
        for (let k = 0; k < n; ++k) {
            const b = bodies && bodies.length === n ? bodies[k] : -1;
            if (!(b >= 0)) walls.push(k);
            else if (groups.has(b)) groups.get(b).push(k);
            else groups.set(b, [k]);
        }
        this.bodyGroups = [];
        let data = xyz;
        if (groups.size) {  // the walls first, then each body's particles together, by body number
            data = new Float32Array(3 * n);
            const order = walls.slice(), fans = [];
            let fanVerts = 0;
            for (const b of [...groups.keys()].sort((p, q) => p - q)) {
                const ks = groups.get(b), fan = bodyFan(xyz, ks);
                this.bodyGroups.push({ first: order.length, count: ks.length, rgb: BODY_COLORS[b % BODY_COLORS.length],
                                       fanFirst: fanVerts, fanCount: fan.length / 3 });
                for (const k of ks) order.push(k);
                fans.push(fan);
                fanVerts += fan.length / 3;
            }
            order.forEach((k, i) => { data[3 * i] = xyz[3 * k]; data[3 * i + 1] = xyz[3 * k + 1]; data[3 * i + 2] = xyz[3 * k + 2]; });
            const all = new Float32Array(3 * fanVerts);
            let at = 0;
            for (const f of fans) { all.set(f, at); at += f.length; }
            gl.bindBuffer(gl.ARRAY_BUFFER, this.fbuf);
            gl.bufferData(gl.ARRAY_BUFFER, all, gl.STREAM_DRAW);
        }
        gl.bindBuffer(gl.ARRAY_BUFFER, this.wxyz);
        gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
        this.wcount = walls.length;
    }
    setBox(lo, hi) {
        const c = (k) => [(k & 1) ? hi[0] : lo[0], (k & 2) ? hi[1] : lo[1], (k & 4) ? hi[2] : lo[2]];
        const v = [];
        for (let k = 0; k < 8; ++k)
            for (const b of [1, 2, 4])
                if (!(k & b)) v.push(...c(k), ...c(k | b));
        const gl = this.gl;
        gl.bindBuffer(gl.ARRAY_BUFFER, this.lbuf);
        gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(v), gl.STATIC_DRAW);
        this.lcount = v.length / 3;
    }
    clearBox() { this.lcount = 0; }
    setSurface(vertices, normals, triangles) {
        const gl = this.gl;
        gl.bindVertexArray(this.svao);
        gl.bindBuffer(gl.ARRAY_BUFFER, this.spos);
        gl.bufferData(gl.ARRAY_BUFFER, vertices, gl.STREAM_DRAW);
        gl.bindBuffer(gl.ARRAY_BUFFER, this.snrm);
        gl.bufferData(gl.ARRAY_BUFFER, normals, gl.STREAM_DRAW);
        gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, triangles, gl.STREAM_DRAW);
        gl.bindVertexArray(null);
        this.sindices = normals.length === vertices.length ? triangles.length : 0;
    }
    clearSurface() { this.sindices = 0; }

    /// The shallow-water grid: cell centres at ((i + 0.5) dx, height, (j + 0.5) dx), y up (the
    /// viewer's heightfield: muted earth tones lighter with height; water bluer and more opaque the
    /// deeper, transparent where dry). The terrain is uploaded when `terrainChanged`. Grids over
    /// GRID_VERTS cells a side are drawn at every k-th cell (the simulation keeps every cell): with a
    /// software GL, 64 (SwiftShader draws a 256^2 grid's 2 x 130,000 triangles at ~3 fps, 64^2 at ~38).
    setGrid(nx, ny, dx, terrain, depth, terrainChanged) {
        const gl = this.gl, GRID_VERTS = this.software ? 64 : 512;
        const k = Math.max(1, Math.ceil(Math.max(nx, ny) / GRID_VERTS));
        const mx = Math.ceil((nx - 1) / k) + 1, my = Math.ceil((ny - 1) / k) + 1;  // vertices a side (the last cell included)
        const col = (a, n) => Math.min(a * k, n - 1);
        if (mx !== this.hnx || my !== this.hny || nx !== this.gnx || ny !== this.gny) {  // triangles between the vertices
            const idx = new Uint32Array((mx - 1) * (my - 1) * 6);
            let q = 0;
            for (let j = 0; j + 1 < my; ++j)
                for (let i = 0; i + 1 < mx; ++i) {
                    const a = i + mx * j, b = a + 1, c = a + mx, d = c + 1;
                    idx[q++] = a; idx[q++] = c; idx[q++] = b; idx[q++] = b; idx[q++] = c; idx[q++] = d;
                }
            gl.bindVertexArray(this.tvao);
            gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, idx, gl.STATIC_DRAW);
            gl.bindVertexArray(null);
            this.hindices = idx.length;
            this.hnx = mx; this.hny = my; this.gnx = nx; this.gny = ny;
            this.hscratch = new Float32Array(mx * my * 10);
            terrainChanged = true;
        }
        const v = this.hscratch, cells = nx * ny;
        let hmin = Infinity, hmax = -Infinity, dmax = 0;
        for (let c = 0; c < cells; ++c) { const t = terrain[c]; if (t < hmin) hmin = t; if (t > hmax) hmax = t; if (depth[c] > dmax) dmax = depth[c]; }
        const deepScale = dmax > 0 ? 1 / dmax : 0;
        const fill = (water) => {
            const height = (i, j) => {  // i, j: cells
                i = i < 0 ? 0 : i >= nx ? nx - 1 : i;
                j = j < 0 ? 0 : j >= ny ? ny - 1 : j;
                const c = i + nx * j;
                return terrain[c] + (water ? depth[c] : 0);
            };
            for (let b = 0; b < my; ++b)
                for (let a = 0; a < mx; ++a) {
                    const i = col(a, nx), j = col(b, ny), c = i + nx * j, o = (a + mx * b) * 10;
                    v[o] = (i + 0.5) * dx; v[o + 1] = height(i, j); v[o + 2] = (j + 0.5) * dx;
                    const n0 = (height(i - k, j) - height(i + k, j)) / k, n1 = 2 * dx, n2 = (height(i, j - k) - height(i, j + k)) / k;
                    const l = Math.hypot(n0, n1, n2);
                    v[o + 3] = n0 / l; v[o + 4] = n1 / l; v[o + 5] = n2 / l;
                    if (!water) {
                        const s = hmax > hmin ? (terrain[c] - hmin) / (hmax - hmin) : 0.5;
                        v[o + 6] = 0.42 + 0.25 * s; v[o + 7] = 0.40 + 0.22 * s; v[o + 8] = 0.34 + 0.20 * s; v[o + 9] = 1;
                    } else {
                        const h = depth[c], deep = Math.min(1, Math.max(0, h * deepScale));
                        v[o + 6] = 0.30 - 0.25 * deep; v[o + 7] = 0.70 - 0.40 * deep; v[o + 8] = 0.95 - 0.25 * deep;
                        v[o + 9] = h > 1e-4 ? 0.55 + 0.35 * deep : 0;
                    }
                }
        };
        // the sides: per side a strip of (bottom, top) pairs along the border vertices
        const sides = [  // [a0, b0, da, db, count, normal]
            [0, 0, 1, 0, mx, [0, 0, -1]], [0, my - 1, 1, 0, mx, [0, 0, 1]],
            [0, 0, 0, 1, my, [-1, 0, 0]], [mx - 1, 0, 0, 1, my, [1, 0, 0]],
        ];
        const skirtVerts = 2 * (2 * mx + 2 * my);
        if (!this.skirt || this.skirt.length !== skirtVerts * 10) this.skirt = new Float32Array(skirtVerts * 10);
        const base = hmin - 0.1 * (hmax - hmin) - 0.01 * Math.max(nx, ny) * dx;
        const skirt = (water) => {
            const w = this.skirt;
            let o = 0;
            this.skirtSides = [];
            for (const [a0, b0, da, db, count, n] of sides) {
                this.skirtSides.push([o / 10, 2 * count]);
                for (let t = 0; t < count; ++t) {
                    const i = col(a0 + da * t, nx), j = col(b0 + db * t, ny), c = i + nx * j;
                    const x = (i + 0.5) * dx, z = (j + 0.5) * dx;
                    const lo = water ? terrain[c] : base, hi = terrain[c] + (water ? depth[c] : 0);
                    let rgba;
                    if (!water) rgba = [0.36, 0.34, 0.29, 1];
                    else {
                        const deep = Math.min(1, Math.max(0, depth[c] * deepScale));
                        rgba = [0.30 - 0.25 * deep, 0.70 - 0.40 * deep, 0.95 - 0.25 * deep, depth[c] > 1e-4 ? 0.55 + 0.35 * deep : 0];
                    }
                    for (const y of [lo, hi]) {
                        w[o] = x; w[o + 1] = y; w[o + 2] = z;
                        w[o + 3] = n[0]; w[o + 4] = n[1]; w[o + 5] = n[2];
                        w[o + 6] = rgba[0]; w[o + 7] = rgba[1]; w[o + 8] = rgba[2]; w[o + 9] = rgba[3];
                        o += 10;
                    }
                }
            }
        };
        if (terrainChanged) {
            fill(false);
            gl.bindBuffer(gl.ARRAY_BUFFER, this.hterrain);
            gl.bufferData(gl.ARRAY_BUFFER, v, gl.STATIC_DRAW);
            skirt(false);
            gl.bindBuffer(gl.ARRAY_BUFFER, this.sterrain);
            gl.bufferData(gl.ARRAY_BUFFER, this.skirt, gl.STATIC_DRAW);
        }
        fill(true);
        gl.bindBuffer(gl.ARRAY_BUFFER, this.hwater);
        gl.bufferData(gl.ARRAY_BUFFER, v, gl.STREAM_DRAW);
        skirt(true);
        gl.bindBuffer(gl.ARRAY_BUFFER, this.swater);
        gl.bufferData(gl.ARRAY_BUFFER, this.skirt, gl.STREAM_DRAW);
        this.hasGrid = true;
    }
    clearGrid() { this.hasGrid = false; }

    /// The 2D bodies over the fluid, each in its colour: its fan (the inside) with the flat line program,
    /// then its particles as discs without a rim, so that the body reads as one filled shape.
    drawBodies(radius, view, proj) {
        const gl = this.gl, l = this.line, p = this.particle;
        gl.useProgram(l.p);
        gl.uniformMatrix4fv(l.u.u_view, false, view);
        gl.uniformMatrix4fv(l.u.u_proj, false, proj);
        gl.bindVertexArray(this.fvao);
        for (const g of this.bodyGroups) {
            gl.uniform4f(l.u.u_rgba, g.rgb[0], g.rgb[1], g.rgb[2], 1);
            gl.drawArrays(gl.TRIANGLE_FAN, g.fanFirst, g.fanCount);
        }
        gl.useProgram(p.p);
        gl.uniform1f(p.u.u_radius, radius);
        gl.uniform1i(p.u.u_flat, 1);
        gl.uniform1f(p.u.u_rim, 0);
        gl.bindVertexArray(this.wvao);
        gl.vertexAttrib1f(2, 0);
        for (const g of this.bodyGroups) {
            gl.uniform3f(p.u.u_flat_rgb, g.rgb[0], g.rgb[1], g.rgb[2]);
            gl.drawArrays(gl.POINTS, g.first, g.count);
        }
    }

    /// The whitewater over the fluid with the particle program (bound by draw()): each type flat in its colour.
    drawDiffuse(radius) {
        const gl = this.gl, p = this.particle;
        if (this.dcounts[0] + this.dcounts[1] + this.dcounts[2] === 0) return;
        gl.uniform1f(p.u.u_radius, radius);
        gl.uniform1i(p.u.u_flat, 1);
        gl.uniform1f(p.u.u_rim, 0);
        gl.bindVertexArray(this.dvao);
        gl.vertexAttrib1f(2, 0);
        for (let t = 0, first = 0; t < 3; first += this.dcounts[t], ++t) {
            if (!this.dcounts[t]) continue;
            gl.uniform3fv(p.u.u_flat_rgb, DIFFUSE_RGB[t]);
            gl.drawArrays(gl.POINTS, first, this.dcounts[t]);
        }
    }

    /// The load arrow over the particles and walls (not hidden by them), flat magenta.
    drawArrow(view, proj) {
        const gl = this.gl, l = this.line;
        if (!this.acount) return;
        gl.useProgram(l.p);
        gl.uniformMatrix4fv(l.u.u_view, false, view);
        gl.uniformMatrix4fv(l.u.u_proj, false, proj);
        gl.uniform4f(l.u.u_rgba, ARROW_RGB[0], ARROW_RGB[1], ARROW_RGB[2], 1);
        gl.bindVertexArray(this.avao);
        gl.disable(gl.DEPTH_TEST);
        gl.drawArrays(this.atriangles ? gl.TRIANGLES : gl.LINES, 0, this.acount);
        gl.enable(gl.DEPTH_TEST);
    }

    /// One frame. o: {cam, is3d, radius, wallRadius, diffuseRadius, rim, range:[lo,hi], colormap, surfaceRgba,
    /// showParticles}.
    draw(o) {
        const gl = this.gl, w = this.canvas.width, h = this.canvas.height, aspect = w / Math.max(h, 1);
        const view = o.cam.view(), proj = o.cam.proj(aspect);
        gl.viewport(0, 0, w, h);
        gl.clearColor(0.075, 0.085, 0.10, 1);
        gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
        gl.enable(gl.DEPTH_TEST);
        gl.depthFunc(gl.LEQUAL);
        const eye = o.is3d ? o.cam.eye() : [0, 0, 1];

        // heightfield: the terrain opaque, then the water translucent
        if (this.hasGrid && this.hindices) {
            const m = this.mesh;
            this.useMesh(view, proj, eye, 0);
            gl.bindVertexArray(this.tvao);
            gl.drawElements(gl.TRIANGLES, this.hindices, gl.UNSIGNED_INT, 0);
            gl.bindVertexArray(this.stvao);
            for (const [first, count] of this.skirtSides) gl.drawArrays(gl.TRIANGLE_STRIP, first, count);
            gl.bindVertexArray(this.hvao);
            gl.uniform1f(m.u.u_shininess, 64);
            gl.enable(gl.BLEND);
            gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
            gl.depthMask(false);
            gl.drawElements(gl.TRIANGLES, this.hindices, gl.UNSIGNED_INT, 0);
            gl.bindVertexArray(this.swvao);
            gl.uniform1f(m.u.u_shininess, 16);
            for (const [first, count] of this.skirtSides) gl.drawArrays(gl.TRIANGLE_STRIP, first, count);
            gl.depthMask(true);
            gl.disable(gl.BLEND);
        }

        if (this.lcount) {  // the bounds
            const l = this.line;
            gl.useProgram(l.p);
            gl.uniformMatrix4fv(l.u.u_view, false, view);
            gl.uniformMatrix4fv(l.u.u_proj, false, proj);
            gl.uniform4f(l.u.u_rgba, 0.55, 0.58, 0.64, 1);
            gl.bindVertexArray(this.lvao);
            gl.drawArrays(gl.LINES, 0, this.lcount);
        }

        if (o.is3d) this.drawSolids(view, proj, eye, false);
        const p = this.particle;
        gl.useProgram(p.p);
        gl.uniformMatrix4fv(p.u.u_view, false, view);
        gl.uniformMatrix4fv(p.u.u_proj, false, proj);
        gl.uniform3fv(p.u.u_cmap, COLORMAPS[o.colormap] || COLORMAPS.classic);
        gl.uniform1i(p.u.u_sphere, o.is3d ? 1 : 0);
        gl.uniform1f(p.u.u_rim, o.rim || 0);
        gl.uniform2f(p.u.u_range, o.range[0], o.range[1]);
        gl.uniform1f(p.u.u_viewport_h, h);
        gl.uniform1f(p.u.u_max_point, this.maxPoint);
        if (this.wcount && !o.is3d) {  // 2D walls, grey
            gl.uniform1f(p.u.u_radius, o.wallRadius);
            gl.uniform1i(p.u.u_flat, 1);
            gl.uniform3f(p.u.u_flat_rgb, 0.45, 0.47, 0.50);
            gl.bindVertexArray(this.wvao);
            gl.vertexAttrib1f(2, 0);
            gl.drawArrays(gl.POINTS, 0, this.wcount);
        }
        if (this.pcount && o.showParticles !== false) {
            gl.uniform1f(p.u.u_radius, o.radius);
            gl.uniform1i(p.u.u_flat, 0);
            gl.bindVertexArray(this.pvao);
            gl.drawArrays(gl.POINTS, 0, this.pcount);
        }
        this.drawDiffuse(o.diffuseRadius || o.radius);
        if (this.bodyGroups.length && !o.is3d) this.drawBodies(o.wallRadius, view, proj);
        if (o.is3d) this.drawSolids(view, proj, eye, true);
        this.drawArrow(view, proj);

        if (this.sindices && o.is3d) {  // the reconstructed surface, translucent over the particles
            this.useMesh(view, proj, eye, 64);
            gl.bindVertexArray(this.svao);
            const c = o.surfaceRgba || [0.20, 0.45, 0.90, 0.75];
            gl.vertexAttrib4f(2, c[0], c[1], c[2], c[3]);
            gl.enable(gl.BLEND);
            gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA);
            gl.depthMask(false);
            gl.drawElements(gl.TRIANGLES, this.sindices, gl.UNSIGNED_INT, 0);
            gl.depthMask(true);
            gl.disable(gl.BLEND);
        }
        gl.bindVertexArray(null);
    }
}
