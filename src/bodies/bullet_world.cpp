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
        : m_L(20.0 * bodies.particle_radius), m_margin(btScalar(0.01)), m_r(bodies.particle_radius) {
        m_config = std::make_unique<btDefaultCollisionConfiguration>();
        m_dispatcher = std::make_unique<btCollisionDispatcher>(m_config.get());
        m_broadphase = std::make_unique<btDbvtBroadphase>();
        m_solver = std::make_unique<btSequentialImpulseConstraintSolver>();
        m_world = std::make_unique<btDiscreteDynamicsWorld>(m_dispatcher.get(), m_broadphase.get(), m_solver.get(),
                                                            m_config.get());
        m_world->setGravity(btVector3(bodies.gravity[0] / m_L, bodies.gravity[1] / m_L, bodies.gravity[2] / m_L));
        m_world->getSolverInfo().m_numIterations = 20;
        for (std::size_t w = 0; w < bodies.walls.size(); ++w) add_wall(bodies.walls[w], bodies.wall_motion[w]);
        for (std::size_t k = 0; k < bodies.size(); ++k) add_body(bodies.specs[k], bodies.shapes[k], bodies.state[k]);
    }

    ~BulletEngine() override {
        for (int i = m_world->getNumCollisionObjects() - 1; i >= 0; --i) {
            btCollisionObject* o = m_world->getCollisionObjectArray()[i];
            if (btRigidBody* b = btRigidBody::upcast(o)) m_world->removeRigidBody(b);
            else m_world->removeCollisionObject(o);
        }
    }

    void step(std::vector<BodyState>& state, const std::vector<ObjectLoad>& load, double t, double dt) override {
        for (auto& [body, motion] : m_moving) {  // kinematic walls: at t now, Bullet's velocities from t -> t + dt
            body->setWorldTransform(transform(motion.pose(t)));
            body->setInterpolationWorldTransform(transform(motion.pose(t)));
            body->getMotionState()->setWorldTransform(transform(motion.pose(t + dt)));
        }
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            btRigidBody* b = m_body[k].body;
            b->applyCentralForce(btVector3(load[k].force[0], load[k].force[1], load[k].force[2]) / m_L);
            b->applyTorque(btVector3(load[k].torque[0], load[k].torque[1], load[k].torque[2]) / (m_L * m_L));
        }
        m_world->stepSimulation(dt, 0);  // 0 substeps: one step of exactly dt
        for (std::size_t k = 0; k < m_body.size(); ++k) {
            const Body& bb = m_body[k];
            const btTransform& tr = bb.body->getWorldTransform();
            BodyState& s = state[k];
            const btVector3 c = tr.getOrigin() * m_L, v = bb.body->getLinearVelocity() * m_L, w = bb.body->getAngularVelocity();
            s.position = {c.x(), c.y(), c.z()};
            s.velocity = {v.x(), v.y(), v.z()};
            s.angular_velocity = {w.x(), w.y(), w.z()};
            // R = (R P) P^T
            s.orientation = matrix_quaternion(from_bt(tr.getBasis() * bb.principal.transpose()));
        }
    }

private:
    struct Body {
        btRigidBody* body;
        btMatrix3x3 principal;  // P: the principal axes at rest (columns)
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

    void add_wall(const BoundarySpec& w, const BoundaryMotion<3>& motion) {
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
        auto* compound = own<btCompoundShape>();  // the rest shape placed in the wall's frame (world at rest)
        compound->addChildShape(local, shape);
        btRigidBody::btRigidBodyConstructionInfo info(0.0, nullptr, compound);
        info.m_friction = 0.5;
        auto body = std::make_unique<btRigidBody>(info);
        if (motion.moving()) {
            auto ms = std::make_unique<btDefaultMotionState>(transform(motion.pose(0.0)));
            body->setMotionState(ms.get());
            body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
            body->setActivationState(DISABLE_DEACTIVATION);
            m_moving.emplace_back(body.get(), motion);
            m_states.push_back(std::move(ms));
        }
        m_world->addRigidBody(body.get());
        m_bodies.push_back(std::move(body));
    }

    void add_body(const BodySpec& spec, const BoundarySpec& shape, const BodyState& s) {
        const PrincipalAxes pa = principal_axes(spec.mass.inertia);
        const btMatrix3x3 P = to_bt(pa.axes), Pt = P.transpose();
        const btVector3 c0(spec.mass.center[0], spec.mass.center[1], spec.mass.center[2]);
        btCollisionShape* child = nullptr;
        btTransform local = btTransform::getIdentity();
        if (const MeshShape<3>* m = model_shape<3>(shape.model)) {
            btConvexHullShape hull;
            for (const auto& p : m->mesh().vertices) hull.addPoint(Pt * (btVector3(p[0], p[1], p[2]) - c0) / m_L, false);
            hull.recalcLocalAabb();
            btShapeHull reduced(&hull);  // at most ~42 vertices: fast contacts
            reduced.buildHull(hull.getMargin());
            auto* h = own<btConvexHullShape>();
            for (int i = 0; i < reduced.numVertices(); ++i) h->addPoint(reduced.getVertexPointer()[i], false);
            h->recalcLocalAabb();
            h->setMargin(m_margin);
            h->initializePolyhedralFeatures();  // full contact manifolds in one step (a box resting flat)
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
        const btVector3 inertia(pa.moments[0] / (m_L * m_L), pa.moments[1] / (m_L * m_L), pa.moments[2] / (m_L * m_L));
        btRigidBody::btRigidBodyConstructionInfo info(spec.mass.mass, nullptr, compound, inertia);
        info.m_friction = spec.friction;
        info.m_restitution = spec.restitution;
        info.m_startWorldTransform = btTransform(to_bt(quaternion_matrix(s.orientation)) * P,
                                                 btVector3(s.position[0], s.position[1], s.position[2]) / m_L);
        auto body = std::make_unique<btRigidBody>(info);
        body->setLinearVelocity(btVector3(s.velocity[0], s.velocity[1], s.velocity[2]) / m_L);
        body->setAngularVelocity(btVector3(s.angular_velocity[0], s.angular_velocity[1], s.angular_velocity[2]));
        body->setActivationState(DISABLE_DEACTIVATION);  // a sleeping body would not feel the fluid
        body->setLinearFactor(btVector3(spec.fixed_translation[0] ? 0 : 1, spec.fixed_translation[1] ? 0 : 1,
                                        spec.fixed_translation[2] ? 0 : 1));
        body->setAngularFactor(btVector3(spec.fixed_rotation[0] ? 0 : 1, spec.fixed_rotation[1] ? 0 : 1,
                                         spec.fixed_rotation[2] ? 0 : 1));
        m_world->addRigidBody(body.get());
        m_body.push_back({body.get(), P});
        m_bodies.push_back(std::move(body));
    }

    double m_L;
    btScalar m_margin;
    double m_r;
    std::unique_ptr<btDefaultCollisionConfiguration> m_config;
    std::unique_ptr<btCollisionDispatcher> m_dispatcher;
    std::unique_ptr<btDbvtBroadphase> m_broadphase;
    std::unique_ptr<btSequentialImpulseConstraintSolver> m_solver;
    std::unique_ptr<btDiscreteDynamicsWorld> m_world;
    std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
    std::vector<std::unique_ptr<btTriangleMesh>> m_meshes;
    std::vector<std::unique_ptr<btDefaultMotionState>> m_states;
    std::vector<std::unique_ptr<btRigidBody>> m_bodies;
    std::vector<Body> m_body;
    std::vector<std::pair<btRigidBody*, BoundaryMotion<3>>> m_moving;
};

}  // namespace

std::unique_ptr<BodyEngine> make_bullet_engine(const RigidBodies<3>& bodies) {
    return std::make_unique<BulletEngine>(bodies);
}

}  // namespace eddy
