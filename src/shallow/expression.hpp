// Expressions of x and y in scene files (terrain, initial surface, velocities, obstacles), parsed by
// muparser (Debian's libmuparser): + - * / ^, comparisons, "c ? a : b", min, max, sin, exp, sqrt, abs...
// Variables: x, y (m, cell centre), Lx, Ly (domain size, m), dx (m); constants _pi, pi, _e.
#pragma once
#include <memory>
#include <string>

namespace eddy::detail {

class Expression {
public:
    /// Compiles `text`; throws InputError "<where>: <key> = "<text>": <muparser's message>" on a bad one.
    Expression(const std::string& text, double Lx, double Ly, double dx, const std::string& where, const std::string& key);
    ~Expression();
    Expression(Expression&&) noexcept;
    Expression& operator=(Expression&&) noexcept;
    /// The value at (x, y). Throws InputError if it is not finite.
    double operator()(double x, double y);

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

}  // namespace eddy::detail
