// The engine of 3D bodies: Bullet 3.24 in double precision (Debian libbullet-dev, the -float64 libraries).
// It owns the contacts between bodies and with the walls (friction, restitution, stacking); eddy hands it
// the fluid's force and torque on each body every step.
//
// Units as for Box2D (box2d_world.cpp): lengths in L = 20 r, so that Bullet's contact thresholds, tuned
// for objects of about one unit, fit bodies a few particles across; collision margins are r / 5.
//
// A body's frame in Bullet is its principal frame (Bullet takes a diagonal inertia): its orientation is
// R P, R the rotation since the scene's pose and P the principal axes at rest; its shapes are the rest
// shapes seen from the centre of mass in that frame. Models (meshes) collide as their convex hull (a
// boat's hull as the filled hull: what it holds is water, which the fluid handles); the walls' models as
// their triangles.
#include <cmath>
#include <memory>
#include <vector>

#include <btBulletDynamicsCommon.h>
#include <BulletCollision/CollisionShapes/btShapeHull.h>

#include "eddy/bodies.hpp"

namespace eddy {

namespace {

using Mat3d = std::array<std::array<double, 3>, 3>;

btMatrix3x3 to_bt(const Mat3d& m) {
    return btMatrix3x3(m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], m[2][0], m[2][1], m[2][2]);
}
Mat3d from_bt(const btMatrix3x3& m) {
    Mat3d r;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r[i][j] = m[i][j];
    return r;
}

class BulletEngine final : public BodyEngine {
public:
    explicit BulletEngine(const RigidBodies<3>& bodies)
        : m_L(20.0 * bodies.particle_radius), m_margin(btScalar(0.01)), m_r(bodies.particle_radius), m_bodies(bodies) {
        // The shapes once (a wall model's BVH, a body's reduced hull); the world every step.
        for (std::size_t w = 0; w < bodies.walls.size(); ++w) m_wall_shape.push_back(wall_shape(bodies.walls[w]));
        for (std::size_t k = 0; k < bodies.size(); ++k) m_body_shape.push_back(body_shape(bodies.specs[k], bodies.shapes[k]));
    }

    // The world is built anew every step from the bodies' state (its contacts start cold): Bullet keeps
    // contact manifolds, warm-start impulses and a broadphase tree between steps that no checkpoint could
    // hold, and a world rebuilt from the state alone steps a resumed run exactly as the run that carried on.
    void step(std::vector<BodyState>& state, const std::vector<ObjectLoad>& load, double t, double dt) override {
        btDefaultCollisionConfiguration config;
        btCollisionDispatcher dispatcher(&config);
        btDbvtBroadphase broadphase;
        btSequentialImpulseConstraintSolver solver;
        btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
        world.setGravity(btVector3(m_bodies.gravity[0], m_bodies.gravity[1], m_bodies.gravity[2]) / m_L);
        world.getSolverInfo().m_numIterations = 20;
        std::vector<std::unique_ptr<btRigidBody>> objects;
        std::vector<std::unique_ptr<btDefaultMotionState>> states;
        for (std::size_t w = 0; w < m_wall_shape.size(); ++w) {
            const BoundaryMotion<3>& motion = m_bodies.wall_motion[w];
            btRigidBody::btRigidBodyConstructionInfo info(0.0, nullptr, m_wall_shape[w]);
            info.m_friction = 0.5;
            auto body = std::make_unique<btRigidBody>(info);
            if (motion.moving()) {  // kinematic: at its pose at t; Bullet's velocities from t -> t + dt
                body->setWorldTransform(transform(motion.pose(t)));
                body->setInterpolationWorldTransform(transform(motion.pose(t)));
                auto ms = std::make_unique<btDefaultMotionState>(transform(motion.pose(t + dt)));
                body->setMotionState(ms.get());
                body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
                body->setActivationState(DISABLE_DEACTIVATION);
                states.push_back(std::move(ms));
            }
            world.addRigidBody(body.get());
            objects.push_back(std::move(body));
        }
        std::vector<btRigidBody*> dynamic;
        for (std::size_t k = 0; k < m_body_shape.size(); ++k) {
            const BodySpec& spec = m_bodies.specs[k];
            const BodyShape& bs = m_body_shape[k];
            const BodyState& s = state[k];
            btRigidBody::btRigidBodyConstructionInfo info(spec.mass.mass, nullptr, bs.shape, bs.inertia);
            info.m_friction = spec.friction;
            info.m_restitution = spec.restitution;
            info.m_startWorldTransform = btTransform(to_bt(quaternion_matrix(s.orientation)) * bs.principal,
                                                     btVector3(s.position[0], s.position[1], s.position[2]) / m_L);
            auto body = std::make_unique<btRigidBody>(info);
            body->setLinearVelocity(btVector3(s.velocity[0], s.velocity[1], s.velocity[2]) / m_L);
            body->setAngularVelocity(btVector3(s.angular_velocity[0], s.angular_velocity[1], s.angular_velocity[2]));
            body->setActivationState(DISABLE_DEACTIVATION);  // a sleeping body would not feel the fluid
            body->setLinearFactor(btVector3(spec.fixed_translation[0] ? 0 : 1, spec.fixed_translation[1] ? 0 : 1,
                                            spec.fixed_translation[2] ? 0 : 1));
            body->setAngularFactor(btVector3(spec.fixed_rotation[0] ? 0 : 1, spec.fixed_rotation[1] ? 0 : 1,
                                             spec.fixed_rotation[2] ? 0 : 1));
            world.addRigidBody(body.get());
            body->applyCentralForce(btVector3(load[k].force[0], load[k].force[1], load[k].force[2]) / m_L);
            body->applyTorque(btVector3(load[k].torque[0], load[k].torque[1], load[k].torque[2]) / (m_L * m_L));
            dynamic.push_back(body.get());
            objects.push_back(std::move(body));
        }
        world.stepSimulation(dt, 0);  // 0 substeps: one step of exactly dt
        for (std::size_t k = 0; k < dynamic.size(); ++k) {
            const btRigidBody* b = dynamic[k];
            const btTransform& tr = b->getWorldTransform();
            BodyState& s = state[k];
            const btVector3 c = tr.getOrigin() * m_L, v = b->getLinearVelocity() * m_L, w = b->getAngularVelocity();
            s.position = {c.x(), c.y(), c.z()};
            s.velocity = {v.x(), v.y(), v.z()};
            s.angular_velocity = {w.x(), w.y(), w.z()};
            s.orientation = matrix_quaternion(from_bt(tr.getBasis() * m_body_shape[k].principal.transpose()));  // R = (R P) P^T
        }
        for (auto& o : objects) world.removeRigidBody(o.get());
    }

private:
    struct BodyShape {
        btCollisionShape* shape;
        btMatrix3x3 principal;  // P: the principal axes at rest (columns)
        btVector3 inertia;      // the principal moments, in the engine's units
    };

    // A wall's pose x -> pivot + shift + R (x - pivot) as a Bullet transform of its rest shape.
    btTransform transform(const RigidPose<3>& p) const {
        const btMatrix3x3 R = to_bt({{{p.R[0][0], p.R[0][1], p.R[0][2]}, {p.R[1][0], p.R[1][1], p.R[1][2]}, {p.R[2][0], p.R[2][1], p.R[2][2]}}});
        const btVector3 pivot(p.pivot[0], p.pivot[1], p.pivot[2]), shift(p.shift[0], p.shift[1], p.shift[2]);
        return btTransform(R, (pivot + shift - R * pivot) / m_L);
    }

    template <class S, class... A>
    S* own(A&&... a) {
        auto s = std::make_unique<S>(std::forward<A>(a)...);
        S* raw = s.get();
        m_shapes.push_back(std::move(s));
        return raw;
    }

    btBvhTriangleMeshShape* triangles(const std::vector<btVector3>& v, const std::vector<std::array<std::uint32_t, 3>>& tri) {
        auto mesh = std::make_unique<btTriangleMesh>(true, false);
        for (const auto& t : tri) mesh->addTriangle(v[t[0]], v[t[1]], v[t[2]]);
        auto* shape = own<btBvhTriangleMeshShape>(mesh.get(), true);
        shape->setMargin(m_margin);
        m_meshes.push_back(std::move(mesh));
        return shape;
    }

    // A sphere or a y-axis cylinder, closed, as triangles (containers: two-sided, the fluid inside).
    btCollisionShape* tessellated(const BoundarySpec& w) {
        const int n = std::max(16, std::min(128, int(2.0 * M_PI * w.radius / (2.0 * m_r))));
        std::vector<btVector3> v;
        std::vector<std::array<std::uint32_t, 3>> tri;
        const btVector3 c(w.center[0], w.center[1], w.center[2]);
        if (w.shape == "cylinder") {
            const double top = w.open_top ? w.height * 2.0 : w.height;
            for (int e = 0; e < 2; ++e)
                for (int i = 0; i < n; ++i) {
                    const double a = 2.0 * M_PI * i / n;
                    v.push_back((c + btVector3(w.radius * std::cos(a), e * top, w.radius * std::sin(a))) / m_L);
                }
            v.push_back(c / m_L);
            for (std::uint32_t i = 0; i < std::uint32_t(n); ++i) {
                const std::uint32_t j = (i + 1) % n;
                tri.push_back({i, j, std::uint32_t(n) + j});
                tri.push_back({i, std::uint32_t(n) + j, std::uint32_t(n) + i});
                tri.push_back({std::uint32_t(2 * n), j, i});  // the bottom
            }
        } else {  // a sphere: latitude-longitude
            const int m = n / 2;
            for (int i = 0; i <= m; ++i)
                for (int j = 0; j < n; ++j) {
                    const double th = M_PI * i / m, ph = 2.0 * M_PI * j / n;
                    v.push_back((c + w.radius * btVector3(std::sin(th) * std::cos(ph), std::cos(th), std::sin(th) * std::sin(ph))) / m_L);
                }
            for (int i = 0; i < m; ++i)
                for (int j = 0; j < n; ++j) {
                    const std::uint32_t a = i * n + j, b = i * n + (j + 1) % n, cc = a + n, d = b + n;
                    tri.push_back({a, b, d});
                    tri.push_back({a, d, cc});
                }
        }
        return triangles(v, tri);
    }

    // A wall's rest shape (its frame: the world at rest).
    btCollisionShape* wall_shape(const BoundarySpec& w) {
        btCollisionShape* shape = nullptr;
        btTransform local = btTransform::getIdentity();
        if (const MeshShape<3>* m = model_shape<3>(w.model)) {
            std::vector<btVector3> v;
            for (const auto& p : m->mesh().vertices) v.push_back(btVector3(p[0], p[1], p[2]) / m_L);
            shape = triangles(v, m->mesh().cells);
        } else if (w.shape == "box") {
            const btVector3 lo(w.min[0], w.min[1], w.min[2]), hi(w.max[0], w.max[1], w.max[2]);
            if (w.solid) {
                shape = own<btBoxShape>((hi - lo) * 0.5 / m_L);
                local.setOrigin((lo + hi) * 0.5 / m_L);
            } else {  // a container: thick slabs on its six (five) sides, one compound
                auto* compound = own<btCompoundShape>();
                const btVector3 size = hi - lo;
                const double T = std::max(size.x(), std::max(size.y(), size.z()));
                auto slab = [&](btVector3 a, btVector3 b) {
                    auto* box = own<btBoxShape>((b - a) * 0.5 / m_L);
                    box->setMargin(m_margin);
                    compound->addChildShape(btTransform(btMatrix3x3::getIdentity(), (a + b) * 0.5 / m_L), box);
                };
                const btVector3 t(T, T, T);
                const double roof = w.open_top ? hi.y() + T : hi.y();
                slab(lo - t, btVector3(hi.x() + T, lo.y(), hi.z() + T));                                   // floor
                if (!w.open_top) slab(btVector3(lo.x() - T, hi.y(), lo.z() - T), hi + t);                 // lid
                slab(btVector3(lo.x() - T, lo.y(), lo.z() - T), btVector3(lo.x(), roof, hi.z() + T));      // -x
                slab(btVector3(hi.x(), lo.y(), lo.z() - T), btVector3(hi.x() + T, roof, hi.z() + T));      // +x
                slab(btVector3(lo.x(), lo.y(), lo.z() - T), btVector3(hi.x(), roof, lo.z()));              // -z
                slab(btVector3(lo.x(), lo.y(), hi.z()), btVector3(hi.x(), roof, hi.z() + T));              // +z
                shape = compound;
            }
        } else if (w.shape == "sphere" && w.solid) {
            shape = own<btSphereShape>(w.radius / m_L);
            local.setOrigin(btVector3(w.center[0], w.center[1], w.center[2]) / m_L);
        } else {
            shape = tessellated(w);
        }
        if (shape->getShapeType() != COMPOUND_SHAPE_PROXYTYPE && shape->getShapeType() != SPHERE_SHAPE_PROXYTYPE)
            shape->setMargin(m_margin);
        auto* compound = own<btCompoundShape>();
        compound->addChildShape(local, shape);
        return compound;
    }

    // A body's shape in its principal frame, about its centre of mass.
    BodyShape body_shape(const BodySpec& spec, const BoundarySpec& shape) {
        const PrincipalAxes pa = principal_axes(spec.mass.inertia);
        const btMatrix3x3 P = to_bt(pa.axes), Pt = P.transpose();
        const btVector3 c0(spec.mass.center[0], spec.mass.center[1], spec.mass.center[2]);
        btCollisionShape* child = nullptr;
        btTransform local = btTransform::getIdentity();
        if (const MeshShape<3>* m = model_shape<3>(shape.model)) {
            btConvexHullShape hull;
            for (const auto& p : m->mesh().vertices) hull.addPoint(Pt * (btVector3(p[0], p[1], p[2]) - c0) / m_L, false);
            hull.setMargin(0.0);  // the reduction samples the support function: with a margin it would grow
            hull.recalcLocalAabb();
            btShapeHull reduced(&hull);  // at most ~42 vertices: fast contacts
            reduced.buildHull(0.0);
            auto* h = own<btConvexHullShape>();
            for (int i = 0; i < reduced.numVertices(); ++i) h->addPoint(reduced.getVertexPointer()[i], false);
            h->recalcLocalAabb();
            h->setMargin(m_margin);
            h->initializePolyhedralFeatures();  // full contact manifolds in one step (a hull resting flat)
            child = h;
        } else if (shape.shape == "box") {
            const btVector3 lo(shape.min[0], shape.min[1], shape.min[2]), hi(shape.max[0], shape.max[1], shape.max[2]);
            auto* box = own<btBoxShape>((hi - lo) * 0.5 / m_L);
            box->setMargin(m_margin);
            child = box;
            local = btTransform(Pt, Pt * ((lo + hi) * 0.5 - c0) / m_L);
        } else {  // sphere
            child = own<btSphereShape>(shape.radius / m_L);
            local.setOrigin(Pt * (btVector3(shape.center[0], shape.center[1], shape.center[2]) - c0) / m_L);
        }
        auto* compound = own<btCompoundShape>();
        compound->addChildShape(local, child);
        const double l2 = m_L * m_L;
        return {compound, P, btVector3(pa.moments[0] / l2, pa.moments[1] / l2, pa.moments[2] / l2)};
    }

    double m_L;
    btScalar m_margin;
    double m_r;
    RigidBodies<3> m_bodies;  // what the world is built from (its state is the step's argument)
    std::vector<std::unique_ptr<btTriangleMesh>> m_meshes;  // before the shapes that use them
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<btCollisionShape*> m_wall_shape;
    std::vector<BodyShape> m_body_shape;
};

}  // namespace

std::unique_ptr<BodyEngine> make_bullet_engine(const RigidBodies<3>& bodies) {
    return std::make_unique<BulletEngine>(bodies);
}

}  // namespace eddy
