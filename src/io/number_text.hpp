// eddy: std::from_chars for double where the standard library has it, and the same contract where it
// does not (libc++ 14, the WebAssembly build's: docs/web.md): C locale, no leading whitespace or '+', no
// hexadecimal prefix ("0x1" reads as 0 and stops at the x), "inf" and "nan" accepted, correctly rounded
// (strtod is, like from_chars), out of range reported and the value left alone.
#pragma once
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <system_error>

namespace eddy::io {

inline std::from_chars_result from_chars_double(const char* first, const char* last, double& value) {
#if defined(__cpp_lib_to_chars) || !defined(_LIBCPP_VERSION)
    return std::from_chars(first, last, value);
#else
    const char* p = first;
    if (p != last && *p == '-') ++p;
    if (p == last || !((*p >= '0' && *p <= '9') || *p == '.' || *p == 'i' || *p == 'I' || *p == 'n' || *p == 'N'))
        return {first, std::errc::invalid_argument};
    std::string text(first, last);
    // Cut a hexadecimal prefix to its 0 (strtod would read it as hex).
    const std::size_t sign = p - first;
    if (text.size() > sign + 1 && text[sign] == '0' && (text[sign + 1] == 'x' || text[sign + 1] == 'X'))
        text.resize(sign + 1);
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) return {first, std::errc::invalid_argument};
    const char* stop = first + (end - text.c_str());
    if (errno == ERANGE) return {stop, std::errc::result_out_of_range};
    value = v;
    return {stop, std::errc()};
#endif
}

}  // namespace eddy::io
