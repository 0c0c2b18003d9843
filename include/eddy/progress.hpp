// eddy: a run's progress as text, written the same way by the command line (`eddy run`) and Python
// (Simulation.run, ShallowWater.run): on a terminal one line redrawn in place, a bar, the simulated
// time, steps, speed, particles, frames and the time left; piped, a plain line every 10% of the run.
#pragma once
#include <string>

#include "eddy/simulation.hpp"

namespace eddy {

/// A wall-clock duration for people: "42s", "3m05s", "1h02m"; "--" when unknown (negative, NaN or
/// beyond 1e7 s).
std::string format_duration(double seconds);

/// How far the run is, 0..1: simulated time over the end time, or steps over the step limit, whichever
/// is further.
double progress_fraction(const Progress& p);

/// "t = 0.1200/2 s  step 340  850 steps/s  27000 particles  3 frames  ETA 1m05s"
std::string progress_line(const Progress& p);

/// What to write for each report of a run (RunOptions::on_progress), "" when nothing is due.
/// terminal: "\r\033[2K[######..................]  25% <progress_line>", redrawing one line, with a
/// newline when the run has finished. Otherwise (a pipe, a log, a notebook): "progress  30%: <line>\n"
/// when the run passed the next tenth, and once when it finished.
class ProgressText {
public:
    explicit ProgressText(bool terminal) : m_terminal(terminal) {}
    std::string operator()(const Progress& p);
    /// A terminal line was drawn and not ended by a newline (a run that stopped by an exception).
    bool line_open() const { return m_open; }

private:
    bool m_terminal = false;
    bool m_open = false;
    int m_last_decile = 0;
};

}  // namespace eddy
