// eddy: errors. Bad user input is an eddy::InputError (exit code 2) whose message names the file,
// the key and what is allowed; programmer errors are EDDY_ASSERT (on in Debug and RelWithDebInfo).
#pragma once
#include <stdexcept>
#include <string>

namespace eddy {

/// Bad input from a user: a scene file, a particle file, a setting, a flag. what() is one line.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Exit codes of the eddy command line.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitBadInput = 2, kExitDiverged = 3, kExitInterrupted = 130 };

}  // namespace eddy

#if defined(NDEBUG) && !defined(EDDY_ENABLE_ASSERTS)
#define EDDY_ASSERT(cond) ((void)0)
#else
#include <cstdio>
#include <cstdlib>
#define EDDY_ASSERT(cond)                                                                   \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            std::fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
            std::abort();                                                                   \
        }                                                                                   \
    } while (0)
#endif
