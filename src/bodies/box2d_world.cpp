// The engine of 2D bodies: Box2D 2.4 (Debian libbox2d-dev). It owns the contacts between bodies and with
// the walls (friction, restitution, stacking); eddy hands it the fluid's force and torque on each body
// every step.
//
// Units: Box2D is tuned for objects of 0.1 to 10 of its length units (its contact slop is 0.005 units,
// polygon skins 0.01). eddy's bodies are as small as a few particles, so lengths are handed over in units
// of L = 20 r: the slop is r / 10, the skin r / 5. Time stays in seconds and mass in kg per metre; then
// velocities, gravity and forces scale by 1/L, torques and inertia by 1/L^2.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <box2d/box2d.h>

#include "eddy/bodies.hpp"

namespace eddy {

namespace {

class Box2dEngine final : public BodyEngine {
public:
    explicit Box2dEngine(const RigidBodies<2>& bodies)
        : m_L(20.0 * bodies.particle_radius), m_r(bodies.particle_radius), m_bodies(bodies) {
        m_triangles.resize(bodies.size());
        for (std::size_t k = 0; k < bodies.size(); ++k)
            if (bodies.shapes[k].shape == "polygon") m_triangles[k] = polygon_triangles(bodies.specs[k], bodies.shapes[k]);
    }

    // The world is built anew every step from the bodies' state (its contacts start cold): Box2D keeps
    // warm-start impulses and contact caches between steps that no checkpoint could hold, and a world
    // rebuilt from the state alone steps a resumed run exactly as the run that carried on.
    void step(std::vector<BodyState>& state, const std::vector<ObjectLoad>& load, double t, double dt) override {
        b2World world(b2Vec2(float(m_bodies.gravity[0] / m_L), float(m_bodies.gravity[1] / m_L)));
        world.SetAllowSleeping(false);  // a sleeping body would not feel the fluid
        m_world = &world;
        const b2BodyDef ground;
        m_ground = world.CreateBody(&ground);
        m_body.clear();
        for (std::size_t w = 0; w < m_bodies.walls.size(); ++w) add_wall(m_bodies.walls[w], m_bodies.wall_motion[w], t, dt);
        for (std::size_t k = 0; k < m_bodies.size(); ++k) add_body(k, state[k]);
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            b2Body* b = m_body[k];
            b->ApplyForceToCenter(b2Vec2(float(load[k].force[0] / m_L), float(load[k].force[1] / m_L)), true);
            b->ApplyTorque(float(load[k].torque[2] / (m_L * m_L)), true);
        }
        world.Step(float(dt), 20, 8);
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            const b2Body* b = m_body[k];
            BodyState& s = state[k];
            const b2Vec2 c = b->GetWorldCenter(), v = b->GetLinearVelocity();
            s.position = {double(c.x) * m_L, double(c.y) * m_L, 0.0};
            s.velocity = {double(v.x) * m_L, double(v.y) * m_L, 0.0};
            const double angle = b->GetAngle();
            s.orientation = {std::cos(0.5 * angle), 0.0, 0.0, std::sin(0.5 * angle)};
            s.angular_velocity = {0.0, 0.0, double(b->GetAngularVelocity())};
        }
        m_world = nullptr;
    }

private:
    b2Vec2 to_b2(double x, double y) const { return b2Vec2(float(x / m_L), float(y / m_L)); }

    // A rigid pose x -> pivot + shift + R (x - pivot) as Box2D's body origin and angle (rest shapes in
    // world coordinates around the origin).
    std::pair<b2Vec2, float> placement(const RigidPose<2>& p) const {
        const double ox = p.pivot[0] + p.shift[0] - (p.R[0][0] * p.pivot[0] + p.R[0][1] * p.pivot[1]);
        const double oy = p.pivot[1] + p.shift[1] - (p.R[1][0] * p.pivot[0] + p.R[1][1] * p.pivot[1]);
        return {to_b2(ox, oy), float(std::atan2(p.R[1][0], p.R[0][0]))};
    }

    void fixture(b2Body* body, const b2Shape& shape, double friction, double restitution) {
        b2FixtureDef def;
        def.shape = &shape;
        def.density = 0.0f;
        def.friction = float(friction);
        def.restitution = float(restitution);
        body->CreateFixture(&def);
    }

    // A polygon as a chain (two-sided: a container's inside and an obstacle's outside alike).
    void chain(b2Body* body, const std::vector<std::array<double, 2>>& pts, bool loop, double ox = 0, double oy = 0) {
        std::vector<b2Vec2> v;
        for (const auto& p : pts) {
            const b2Vec2 q = to_b2(p[0] - ox, p[1] - oy);
            // Box2D refuses corners closer than its slop: skip them.
            if (!v.empty() && b2DistanceSquared(v.back(), q) < 4.0f * b2_linearSlop * b2_linearSlop) continue;
            v.push_back(q);
        }
        if (loop && v.size() > 3 && b2DistanceSquared(v.back(), v.front()) < 4.0f * b2_linearSlop * b2_linearSlop) v.pop_back();
        if (v.size() < (loop ? 3u : 2u)) return;
        b2ChainShape c;
        if (loop) c.CreateLoop(v.data(), int32(v.size()));
        else c.CreateChain(v.data(), int32(v.size()), v.front(), v.back());
        fixture(body, c, 0.5, 0.0);
    }

    void add_wall(const BoundarySpec& w, const BoundaryMotion<2>& motion, double t, double dt) {
        b2Body* body = m_ground;
        if (motion.moving()) {  // a prescribed motion: at its pose at t, moving to that at t + dt
            const auto [p0, a0] = placement(motion.pose(t));
            const auto [p1, a1] = placement(motion.pose(t + dt));
            b2BodyDef def;
            def.type = b2_kinematicBody;
            def.position = p0;
            def.angle = a0;
            def.linearVelocity = float(1.0 / dt) * (p1 - p0);
            def.angularVelocity = float((a1 - a0) / dt);
            body = m_world->CreateBody(&def);
        }
        if (const MeshShape<2>* m = model_shape<2>(w.model)) {
            // The polygon's segments, each a two-sided edge.
            const Mesh<2>& mesh = m->mesh();
            for (const auto& s : mesh.cells) {
                b2EdgeShape e;
                const Vec2 a = mesh.vertices[s[0]], b = mesh.vertices[s[1]];
                e.SetTwoSided(to_b2(a[0], a[1]), to_b2(b[0], b[1]));
                if (b2DistanceSquared(e.m_vertex1, e.m_vertex2) > b2_linearSlop * b2_linearSlop) fixture(body, e, 0.5, 0.0);
            }
            return;
        }
        if (w.shape == "box") {
            if (w.solid) {
                b2PolygonShape p;
                p.SetAsBox(float(0.5 * (w.max[0] - w.min[0]) / m_L), float(0.5 * (w.max[1] - w.min[1]) / m_L),
                           to_b2(0.5 * (w.min[0] + w.max[0]), 0.5 * (w.min[1] + w.max[1])), 0.0f);
                fixture(body, p, 0.5, 0.0);
                return;
            }
            // A container: four thick slabs around it (three without a lid).
            const double T = std::max(w.max[0] - w.min[0], w.max[1] - w.min[1]);
            auto slab = [&](double x0, double y0, double x1, double y1) {
                b2PolygonShape p;
                p.SetAsBox(float(0.5 * (x1 - x0) / m_L), float(0.5 * (y1 - y0) / m_L), to_b2(0.5 * (x0 + x1), 0.5 * (y0 + y1)), 0.0f);
                fixture(body, p, 0.5, 0.0);
            };
            slab(w.min[0] - T, w.min[1] - T, w.max[0] + T, w.min[1]);                          // floor
            slab(w.min[0] - T, w.min[1], w.min[0], w.max[1] + (w.open_top ? T : 0.0));           // left
            slab(w.max[0], w.min[1], w.max[0] + T, w.max[1] + (w.open_top ? T : 0.0));           // right
            if (!w.open_top) slab(w.min[0] - T, w.max[1], w.max[0] + T, w.max[1] + T);         // lid
            return;
        }
        // A circle.
        if (w.solid) {
            b2CircleShape c;
            c.m_p = to_b2(w.center[0], w.center[1]);
            c.m_radius = float(w.radius / m_L);
            fixture(body, c, 0.5, 0.0);
            return;
        }
        std::vector<std::array<double, 2>> ring;
        const int n = std::clamp(int(2.0 * M_PI * w.radius / (2.0 * m_r)), 16, 256);
        for (int i = 0; i < n; ++i) {
            const double a = 2.0 * M_PI * i / n;
            ring.push_back({w.center[0] + w.radius * std::cos(a), w.center[1] + w.radius * std::sin(a)});
        }
        chain(body, ring, true);
    }

    void add_body(std::size_t k, const BodyState& s) {
        const BodySpec& spec = m_bodies.specs[k];
        const BoundarySpec& shape = m_bodies.shapes[k];
        b2BodyDef def;
        def.type = b2_dynamicBody;
        def.position = to_b2(s.position[0], s.position[1]);
        def.angle = float(2.0 * std::atan2(s.orientation[3], s.orientation[0]));
        def.linearVelocity = to_b2(s.velocity[0], s.velocity[1]);
        def.angularVelocity = float(s.angular_velocity[2]);
        def.fixedRotation = spec.fixed_rotation[2];
        b2Body* body = m_world->CreateBody(&def);
        // Shapes in the body's frame: the rest shape about the centre of mass.
        const double cx = spec.mass.center[0], cy = spec.mass.center[1];
        if (shape.shape == "box") {
            b2PolygonShape p;
            p.SetAsBox(float(0.5 * (shape.max[0] - shape.min[0]) / m_L), float(0.5 * (shape.max[1] - shape.min[1]) / m_L),
                       to_b2(0.5 * (shape.min[0] + shape.max[0]) - cx, 0.5 * (shape.min[1] + shape.max[1]) - cy), 0.0f);
            fixture(body, p, spec.friction, spec.restitution);
        } else if (shape.shape == "circle") {
            b2CircleShape c;
            c.m_p = to_b2(shape.center[0] - cx, shape.center[1] - cy);
            c.m_radius = float(shape.radius / m_L);
            fixture(body, c, spec.friction, spec.restitution);
        } else {  // a polygon: its triangles (polygon_triangles)
            polygon_fixtures(body, k);
        }
        b2MassData md;
        md.mass = float(spec.mass.mass);
        md.center = b2Vec2(0.0f, 0.0f);
        md.I = float(spec.mass.inertia[2][2] / (m_L * m_L));
        body->SetMassData(&md);
        // Fixed translations: a joint to the ground that leaves the free axis (or none) to the body.
        const bool fx = spec.fixed_translation[0], fy = spec.fixed_translation[1];
        if (fx && fy) {
            b2RevoluteJointDef j;
            j.Initialize(m_ground, body, body->GetWorldCenter());
            m_world->CreateJoint(&j);
        } else if (fx || fy) {
            b2PrismaticJointDef j;
            j.Initialize(m_ground, body, body->GetWorldCenter(), fx ? b2Vec2(0.0f, 1.0f) : b2Vec2(1.0f, 0.0f));
            m_world->CreateJoint(&j);
        }
        m_body.push_back(body);
    }

    // Body k's polygon triangles as fixtures; a disc of the polygon's area when none is left.
    void polygon_fixtures(b2Body* body, std::size_t k) {
        const BodySpec& spec = m_bodies.specs[k];
        for (const auto& tri : m_triangles[k]) {
            b2PolygonShape p;
            p.Set(tri.data(), 3);
            fixture(body, p, spec.friction, spec.restitution);
        }
        if (!m_triangles[k].empty()) return;
        b2CircleShape c;
        c.m_radius = float(std::max(std::sqrt(shape_area(m_bodies.shapes[k].model.points) / M_PI) / m_L, double(b2_linearSlop)));
        fixture(body, c, spec.friction, spec.restitution);
    }

    static double shape_area(const std::vector<std::array<double, 2>>& p) {
        double area = 0.0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const auto& a = p[i];
            const auto& b = p[(i + 1) % p.size()];
            area += a[0] * b[1] - b[0] * a[1];
        }
        return 0.5 * std::fabs(area);
    }

    // A polygon body's collision triangles in Box2D's units about its centre of mass, once per engine.
    // Box2D welds corners closer than half its slop and asserts (b2PolygonShape::Set) when a triangle's
    // corners weld or line up: a polygon of 3,000 points on a 4 cm circle, or with nearly coincident
    // points, aborted eddy. The outline keeps the corners at least a slop from the last kept one (the
    // mass and inertia are the scene's, set apart: only the contact outline coarsens, by under 0.1 r),
    // and a triangle whose corners are closer than a slop or whose height is below one is left out.
    std::vector<std::array<b2Vec2, 3>> polygon_triangles(const BodySpec& spec, const BoundarySpec& shape) const {
        const double cx = spec.mass.center[0], cy = spec.mass.center[1];
        const double slop = double(b2_linearSlop);
        std::vector<std::array<double, 2>> outline;
        for (const auto& q : shape.model.points) {
            const std::array<double, 2> u{(q[0] - cx) / m_L, (q[1] - cy) / m_L};
            if (!outline.empty() && std::hypot(u[0] - outline.back()[0], u[1] - outline.back()[1]) < slop) continue;
            outline.push_back(u);
        }
        while (outline.size() > 3 &&
               std::hypot(outline.back()[0] - outline.front()[0], outline.back()[1] - outline.front()[1]) < slop)
            outline.pop_back();
        std::vector<std::array<b2Vec2, 3>> out;
        if (outline.size() < 3) return out;
        for (const auto& tri : triangulate(outline)) {
            std::array<b2Vec2, 3> v;
            double longest = 0.0, shortest = 1e300;
            for (int i = 0; i < 3; ++i) {
                v[i] = b2Vec2(float(outline[tri[i]][0]), float(outline[tri[i]][1]));
                const auto& a = outline[tri[i]];
                const auto& b = outline[tri[(i + 1) % 3]];
                const double len = std::hypot(b[0] - a[0], b[1] - a[1]);
                longest = std::max(longest, len);
                shortest = std::min(shortest, len);
            }
            const double area2 = std::fabs(double(b2Cross(v[1] - v[0], v[2] - v[0])));
            if (shortest < slop || area2 < slop * longest) continue;  // welded corners, or a sliver (height < slop)
            out.push_back(v);
        }
        return out;
    }

    // Ear clipping of a simple polygon (either winding): index triples.
    static std::vector<std::array<std::size_t, 3>> triangulate(const std::vector<std::array<double, 2>>& p) {
        std::vector<std::size_t> idx(p.size());
        for (std::size_t i = 0; i < p.size(); ++i) idx[i] = i;
        double area = 0.0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const auto& a = p[i];
            const auto& b = p[(i + 1) % p.size()];
            area += a[0] * b[1] - b[0] * a[1];
        }
        if (area < 0.0) std::reverse(idx.begin(), idx.end());
        auto cross = [&](std::size_t a, std::size_t b, std::size_t c) {
            return (p[b][0] - p[a][0]) * (p[c][1] - p[a][1]) - (p[b][1] - p[a][1]) * (p[c][0] - p[a][0]);
        };
        std::vector<std::array<std::size_t, 3>> out;
        std::size_t guard = 0;
        while (idx.size() > 3 && guard++ < 4 * p.size() * p.size()) {
            bool clipped = false;
            for (std::size_t i = 0; i < idx.size(); ++i) {
                const std::size_t a = idx[(i + idx.size() - 1) % idx.size()], b = idx[i], c = idx[(i + 1) % idx.size()];
                if (cross(a, b, c) <= 0.0) continue;  // a reflex corner
                bool empty = true;
                for (std::size_t q : idx)
                    if (q != a && q != b && q != c && cross(a, b, q) >= 0.0 && cross(b, c, q) >= 0.0 && cross(c, a, q) >= 0.0) {
                        empty = false;
                        break;
                    }
                if (!empty) continue;
                out.push_back({a, b, c});
                idx.erase(idx.begin() + std::ptrdiff_t(i));
                clipped = true;
                break;
            }
            if (!clipped) break;  // not simple: what is left is dropped
        }
        if (idx.size() == 3) out.push_back({idx[0], idx[1], idx[2]});
        return out;
    }

    double m_L;
    double m_r;  // particle radius (m)
    RigidBodies<2> m_bodies;  // what the world is built from (its state is the step's argument)
    b2World* m_world = nullptr;  // within step()
    b2Body* m_ground = nullptr;
    std::vector<b2Body*> m_body;
    std::vector<std::vector<std::array<b2Vec2, 3>>> m_triangles;  // per body: polygon_triangles (others: none)
};

}  // namespace

std::unique_ptr<BodyEngine> make_box2d_engine(const RigidBodies<2>& bodies) {
    return std::make_unique<Box2dEngine>(bodies);
}

}  // namespace eddy
