// eddy: bodies that give way within a solver's pressure or constraint solve (eddy/body_coupling.hpp:
// the equations and why the relaxation).
#include "eddy/body_coupling.hpp"

#include <algorithm>
#include <limits>

namespace eddy {

namespace {

constexpr std::uint32_t kNoBody = std::numeric_limits<std::uint32_t>::max();
constexpr int kMostBodies = 8;  // bodies one particle is coupled to (more: the extra ones are walls)

using Mat3d = std::array<std::array<double, 3>, 3>;

double quadratic(const Mat3d& A, const double* u) {
    double s = 0.0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) s += u[a] * A[a][b] * u[b];
    return s;
}

}  // namespace

template <int D>
bool BodyCoupling<D>::begin(const Vec<D>* x, std::size_t n, const BoundarySet<D>& walls,
                            const std::vector<BoundaryMotion<D>>& motions, const NeighborLists& bn,
                            const CubicSpline<D>& W, double t, const ExecContext& exec) {
    m_mobile.clear();
    m_object.clear();
    std::vector<std::uint32_t> body_of(motions.size(), kNoBody);
    for (std::size_t o = 0; o < motions.size(); ++o) {
        const BoundaryMotion<D>& motion = motions[o];
        const DrivenState& s = motion.state;
        bool mobile = false;
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) mobile = mobile || s.inverse_mass[a][b] != 0.0 || s.inverse_inertia[a][b] != 0.0;
        if (!motion.driven || !mobile) continue;
        Mobile body{s.inverse_mass, s.inverse_inertia, {0, 0, 0}};
        for (int a = 0; a < 3; ++a)
            body.center[a] = (a < D ? double(motion.pivot[a]) : 0.0) + s.shift[a] + s.velocity[a] * (t - s.time);
        body_of[o] = static_cast<std::uint32_t>(m_mobile.size());
        m_mobile.push_back(body);
        m_object.push_back(static_cast<std::uint32_t>(o));
    }
    if (m_mobile.empty()) return false;

    const Vec<D>* xb = walls.position.data();
    const float* psi = walls.psi.data();
    // The bodies particle i touches, in the order its wall list first meets them.
    auto bodies_of = [&](std::size_t i, std::uint32_t* out) {
        int c = 0;
        for (std::uint32_t k : bn[i]) {
            const std::uint32_t body = body_of[walls.object[k]];
            if (body == kNoBody || std::find(out, out + c, body) != out + c || c == kMostBodies) continue;
            out[c++] = body;
        }
        return c;
    };
    m_off.assign(n + 1, 0);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t seen[kMostBodies];
        m_off[i + 1] = static_cast<std::uint32_t>(bodies_of(i, seen));
    });
    m_particles.clear();
    for (std::size_t i = 0; i < n; ++i) {
        if (m_off[i + 1] != 0) m_particles.push_back(static_cast<std::uint32_t>(i));
        m_off[i + 1] += m_off[i];
    }
    m_pairs.resize(m_off[n]);
    parallel_for_each_index(exec, n, [&](std::size_t i) {
        std::uint32_t seen[kMostBodies];
        const int c = bodies_of(i, seen);
        Pair* out = m_pairs.data() + m_off[i];
        for (int e = 0; e < c; ++e) out[e] = Pair{seen[e], Vec<D>::zero(), Vec3::zero()};
        for (std::uint32_t k : bn[i]) {
            const std::uint32_t body = body_of[walls.object[k]];
            Pair* p = std::find_if(out, out + c, [&](const Pair& q) { return q.body == body; });
            if (p == out + c) continue;
            const Vec<D> d = x[i] - xb[k];
            const float len = norm(d);
            if (len == 0.0f) continue;
            const Vec<D> g = d * (psi[k] * W.derivative(len) / len);  // as the density pass's
            p->G += g;
            Vec<D> r;
            for (int a = 0; a < D; ++a) r[a] = static_cast<float>(double(xb[k][a]) - m_mobile[body].center[a]);
            if constexpr (D == 2) {
                p->T[2] += r[0] * g[1] - r[1] * g[0];
            } else {
                p->T[0] += r[1] * g[2] - r[2] * g[1];
                p->T[1] += r[2] * g[0] - r[0] * g[2];
                p->T[2] += r[0] * g[1] - r[1] * g[0];
            }
        }
    });
    return true;
}

template <int D>
std::vector<float> BodyCoupling<D>::relaxation(const float* a, float mass, std::size_t owned, Halo<D>* halo,
                                               const ExecContext& exec) const {
    const std::size_t nb = m_mobile.size();
    const std::uint32_t* list = m_particles.data();
    const std::size_t touching = std::lower_bound(list, list + m_particles.size(), owned) - list;
    std::vector<ExactSum> S = parallel_reduce_blocks(
        exec, touching, std::vector<ExactSum>(nb),
        [&](std::size_t b0, std::size_t b1) {
            std::vector<ExactSum> s(nb);
            for (std::size_t q = b0; q < b1; ++q) {
                const std::uint32_t i = list[q];
                for (std::uint32_t e = m_off[i]; e < m_off[i + 1]; ++e) {
                    const Pair& p = m_pairs[e];
                    double G[3] = {0, 0, 0}, T[3] = {p.T[0], p.T[1], p.T[2]};
                    for (int c = 0; c < D; ++c) G[c] = p.G[c];
                    const Mobile& body = m_mobile[p.body];
                    s[p.body].add(double(a[i]) * (quadratic(body.inv_mass, G) + quadratic(body.inv_inertia, T)));
                }
            }
            return s;
        },
        [](std::vector<ExactSum> l, const std::vector<ExactSum>& r) {
            for (std::size_t b = 0; b < l.size(); ++b) l[b] += r[b];
            return l;
        });
    if (halo) halo->sum(S);
    std::vector<float> relax(nb);
    for (std::size_t b = 0; b < nb; ++b) relax[b] = static_cast<float>(1.0 / (1.0 + double(mass) * S[b].value()));
    return relax;
}

template <int D>
void BodyCoupling<D>::relax(float* a, const std::vector<float>& relaxation, const ExecContext& exec) const {
    parallel_for_each_index(exec, m_particles.size(), [&](std::size_t q) {
        const std::uint32_t i = m_particles[q];
        float f = 1.0f;
        for (std::uint32_t e = m_off[i]; e < m_off[i + 1]; ++e) f = std::min(f, relaxation[m_pairs[e].body]);
        a[i] *= f;
    });
}

template <int D>
std::vector<typename BodyCoupling<D>::Change> BodyCoupling<D>::response(const float* w, double scale, std::size_t owned,
                                                                        Halo<D>* halo, const ExecContext& exec) const {
    // sum_i w_i (G_i, T_i) per body, summed exactly: 3 + 3 per body.
    const std::size_t nb = m_mobile.size();
    const std::uint32_t* list = m_particles.data();
    const std::size_t touching = std::lower_bound(list, list + m_particles.size(), owned) - list;
    std::vector<ExactSum> sum = parallel_reduce_blocks(
        exec, touching, std::vector<ExactSum>(6 * nb),
        [&](std::size_t b0, std::size_t b1) {
            std::vector<ExactSum> s(6 * nb);
            for (std::size_t q = b0; q < b1; ++q) {
                const std::uint32_t i = list[q];
                if (w[i] == 0.0f) continue;
                for (std::uint32_t e = m_off[i]; e < m_off[i + 1]; ++e) {
                    const Pair& p = m_pairs[e];
                    for (int a = 0; a < D; ++a) s[6 * p.body + a].add(double(w[i]) * p.G[a]);
                    for (int a = 0; a < 3; ++a) s[6 * p.body + 3 + a].add(double(w[i]) * p.T[a]);
                }
            }
            return s;
        },
        [](std::vector<ExactSum> l, const std::vector<ExactSum>& r) {
            for (std::size_t b = 0; b < l.size(); ++b) l[b] += r[b];
            return l;
        });
    if (halo) halo->sum(sum);
    std::vector<Change> out(nb);
    for (std::size_t b = 0; b < nb; ++b) {
        const Mobile& body = m_mobile[b];
        for (int a = 0; a < 3; ++a) {
            double v = 0.0, u = 0.0;
            for (int c = 0; c < 3; ++c) {
                v += body.inv_mass[a][c] * sum[6 * b + c].value();
                u += body.inv_inertia[a][c] * sum[6 * b + 3 + c].value();
            }
            out[b][a] = scale * v;
            out[b][3 + a] = scale * u;
        }
    }
    return out;
}

template <int D>
std::vector<typename BodyCoupling<D>::Change> BodyCoupling<D>::fall(const Vec<D>& gdt) const {
    std::vector<Change> dv(m_mobile.size());
    for (std::size_t b = 0; b < m_mobile.size(); ++b)
        for (int a = 0; a < D; ++a) dv[b][a] = m_mobile[b].inv_mass[a][a] != 0.0 ? double(gdt[a]) : 0.0;
    return dv;
}

template class BodyCoupling<2>;
template class BodyCoupling<3>;

}  // namespace eddy
