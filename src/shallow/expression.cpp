#include "shallow/expression.hpp"

#include <cmath>

#include <fmt/format.h>
#include <muParser.h>

#include "eddy/error.hpp"
#include "eddy/json_text.hpp"

namespace eddy::detail {

struct Expression::Impl {
    mu::Parser parser;
    double x = 0, y = 0, lx = 0, ly = 0, dx = 0;
    std::string text, where, key;
};

Expression::Expression(const std::string& text, double Lx, double Ly, double dx, const std::string& where,
                       const std::string& key)
    : m(std::make_unique<Impl>()) {
    m->lx = Lx;
    m->ly = Ly;
    m->dx = dx;
    m->text = text;
    m->where = where;
    m->key = key;
    try {
        m->parser.DefineVar("x", &m->x);
        m->parser.DefineVar("y", &m->y);
        m->parser.DefineVar("Lx", &m->lx);
        m->parser.DefineVar("Ly", &m->ly);
        m->parser.DefineVar("dx", &m->dx);
        m->parser.DefineConst("pi", M_PI);
        m->parser.SetExpr(text);
        m->parser.Eval();  // compiles: syntax errors and unknown names surface here
    } catch (const mu::Parser::exception_type& e) {
        throw InputError(fmt::format("{}: {} = \"{}\": {} (an expression of x, y, Lx, Ly, dx; e.g. \"max(0, 0.2 - "
                                     "0.05*(x-10)^2)\")",
                                     where, key, text_excerpt(text), text_excerpt(e.GetMsg(), 200)));
    }
}

Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

double Expression::operator()(double x, double y) {
    m->x = x;
    m->y = y;
    double v = 0;
    try {
        v = m->parser.Eval();
    } catch (const mu::Parser::exception_type& e) {
        throw InputError(fmt::format("{}: {} = \"{}\": {} at x = {:g}, y = {:g}", m->where, m->key, text_excerpt(m->text),
                                     text_excerpt(e.GetMsg(), 200), x, y));
    }
    if (!std::isfinite(v))
        throw InputError(fmt::format("{}: {} = \"{}\" is not finite at x = {:g}, y = {:g}", m->where, m->key, text_excerpt(m->text), x,
                                     y));
    return v;
}

}  // namespace eddy::detail
