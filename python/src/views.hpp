// Zero-copy numpy views of a simulation's std::vectors that can never read freed memory.
//
// A view looks into the simulation's own vector (no copy) and holds a Lease as its base: the lease keeps
// the Python simulation object alive. A step may reallocate a field (ParticleSet::reorder permutes into
// a scratch vector and frees the old buffer; add_particles grows it), so before anything changes the
// fields, the owner calls detach() on each: a field that live views still look into gets a fresh copy
// of itself, and its old buffer moves into those views' leases. Stale views then keep the values they
// had, in memory they own, instead of pointing at freed memory. Nothing is copied when no view of a
// field is alive (the usual `x = sim.positions` after each step, the previous `x` gone).
#pragma once
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "bindings.hpp"

namespace eddy::python {

class ViewLeases {
public:
    /// A (shape, strides) array of `dtype` over `data`'s buffer, read-only unless `writable`; its base
    /// keeps `owner` (the Python object holding `data`) alive.
    template <class T>
    py::array make(std::vector<T>& data, const py::dtype& dtype, std::vector<py::ssize_t> shape,
                   std::vector<py::ssize_t> strides, const py::object& owner, bool writable) {
        auto lease = std::make_shared<Lease>();
        lease->owner = owner;
        lease->data = data.data();
        prune();
        m_leases.push_back(lease);
        auto* keep = new std::shared_ptr<Lease>(std::move(lease));
        py::capsule base(keep, [](void* p) { delete static_cast<std::shared_ptr<Lease>*>(p); });
        py::array a(dtype, std::move(shape), std::move(strides), static_cast<const void*>(data.data()), base);
        if (!writable) a.attr("setflags")(py::arg("write") = false);
        return a;
    }

    /// Before `data` may be reallocated or changed: live views of it get its current buffer to keep,
    /// and `data` continues in a copy. Call with the GIL held.
    template <class T>
    void detach(std::vector<T>& data) {
        if (data.empty()) return;
        prune();
        std::shared_ptr<std::vector<T>> old;
        for (const auto& w : m_leases) {
            const auto lease = w.lock();
            if (!lease || lease->retained || lease->data != static_cast<const void*>(data.data())) continue;
            if (!old) {
                old = std::make_shared<std::vector<T>>(data);  // the copy the simulation goes on with
                std::swap(*old, data);                         // `old` now holds the views' buffer
            }
            lease->retained = old;
        }
    }

    /// Live views (for tests and repr).
    std::size_t live() {
        prune();
        return m_leases.size();
    }

private:
    struct Lease {
        py::object owner;                 ///< The Python simulation (kept alive while a view exists)
        const void* data = nullptr;       ///< The buffer the view looks into
        std::shared_ptr<void> retained;   ///< That buffer, once the simulation moved on to a copy
    };
    void prune() {
        std::erase_if(m_leases, [](const std::weak_ptr<Lease>& w) { return w.expired(); });
    }
    std::vector<std::weak_ptr<Lease>> m_leases;
};

/// A simulation steps with the GIL released: another Python thread, or run()'s progress callback, must
/// not step it, change it or take views of it meanwhile (a view taken between two steps of run() would
/// not be detached before the next). Everything that touches the particles checks `busy`; step, run,
/// add_particles and settings changes hold it (RuntimeError otherwise).
inline void check_idle(bool busy) {
    if (busy)
        throw std::runtime_error(
            "the simulation is stepping (in run(), its progress callback, or another thread): read or change it "
            "after that returns");
}
class Busy {
public:
    explicit Busy(bool& flag) : m_flag(flag) {
        check_idle(flag);
        m_flag = true;
    }
    ~Busy() { m_flag = false; }
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

private:
    bool& m_flag;
};

}  // namespace eddy::python
