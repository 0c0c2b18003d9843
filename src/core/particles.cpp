#include "eddy/particles.hpp"

#include <algorithm>

#include "eddy/error.hpp"

namespace eddy {

template <int D>
std::size_t ParticleSet<D>::add_scalar(std::string_view name) {
    for (std::size_t i = 0; i < scalars.size(); ++i)
        if (scalars[i].name == name) return i;
    scalars.push_back({std::string(name), std::vector<float>(size(), 0.0f)});
    return scalars.size() - 1;
}

template <int D>
std::size_t ParticleSet<D>::add_vector(std::string_view name) {
    for (std::size_t i = 0; i < vectors.size(); ++i)
        if (vectors[i].name == name) return i;
    vectors.push_back({std::string(name), std::vector<Vec<D>>(size(), Vec<D>::zero())});
    return vectors.size() - 1;
}

template <int D>
void ParticleSet<D>::push_back(const Vec<D>& x, const Vec<D>& v) {
    position.push_back(x);
    velocity.push_back(v);
    acceleration.push_back(Vec<D>::zero());
    density.push_back(0.0f);
    pressure.push_back(0.0f);
    id.push_back(next_id++);
    for (auto& f : scalars) f.data.push_back(0.0f);
    for (auto& f : vectors) f.data.push_back(Vec<D>::zero());
}

template <int D>
void ParticleSet<D>::resize(std::size_t n) {
    const std::size_t old = size();
    position.resize(n, Vec<D>::zero());
    velocity.resize(n, Vec<D>::zero());
    acceleration.resize(n, Vec<D>::zero());
    density.resize(n, 0.0f);
    pressure.resize(n, 0.0f);
    id.resize(n);
    for (std::size_t i = old; i < n; ++i) id[i] = next_id++;
    for (auto& f : scalars) f.data.resize(n, 0.0f);
    for (auto& f : vectors) f.data.resize(n, Vec<D>::zero());
}

namespace {
template <class T>
void permute(std::vector<T>& data, std::span<const std::uint32_t> order, std::vector<T>& scratch, const ExecContext& exec) {
    scratch.resize(data.size());
    parallel_for_each_index(exec, data.size(), [&](std::size_t i) { scratch[i] = data[order[i]]; });
    data.swap(scratch);
}
}  // namespace

template <int D>
void ParticleSet<D>::reorder(std::span<const std::uint32_t> order, const ExecContext& exec) {
    EDDY_ASSERT(order.size() == size());
    std::vector<Vec<D>> sv;
    std::vector<float> sf;
    std::vector<std::uint32_t> su;
    permute(position, order, sv, exec);
    permute(velocity, order, sv, exec);
    permute(acceleration, order, sv, exec);
    permute(density, order, sf, exec);
    permute(pressure, order, sf, exec);
    permute(id, order, su, exec);
    for (auto& f : scalars) permute(f.data, order, sf, exec);
    for (auto& f : vectors) permute(f.data, order, sv, exec);
}

template <int D>
std::size_t ParticleSet<D>::memory_bytes() const {
    std::size_t b = (position.capacity() + velocity.capacity() + acceleration.capacity()) * sizeof(Vec<D>) +
                    (density.capacity() + pressure.capacity()) * sizeof(float) + id.capacity() * sizeof(std::uint32_t);
    for (const auto& f : scalars) b += f.data.capacity() * sizeof(float);
    for (const auto& f : vectors) b += f.data.capacity() * sizeof(Vec<D>);
    return b;
}

template <int D>
void ParticleSet<D>::keep(std::span<const std::uint8_t> keep) {
    auto compact = [&](auto& v) {
        if (v.size() != keep.size()) return;  // a field not sized like the set holds nothing per particle
        std::size_t n = 0;
        for (std::size_t i = 0; i < keep.size(); ++i)
            if (keep[i]) v[n++] = v[i];
        v.resize(n);
    };
    compact(position);
    compact(velocity);
    compact(acceleration);
    compact(density);
    compact(pressure);
    compact(id);
    for (auto& s : scalars) compact(s.data);
    for (auto& s : vectors) compact(s.data);
}

template struct ParticleSet<2>;
template struct ParticleSet<3>;

}  // namespace eddy
