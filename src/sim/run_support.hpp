// Pieces of the run loop shared by the particle run (src/sim/run.cpp) and the grid run
// (src/shallow/run_loop.hpp): the run folder (its frames/ folder, stale files, the run's identity),
// the checked reading of a checkpoint's run record, progress.
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "eddy/simulation.hpp"
#include "eddy/up_axis.hpp"

namespace eddy::detail {

/// The marker of a run folder: {"run_id": "<32 hex digits>"}. A checkpoint carries the same id in its
/// record and resumes only in the folder whose marker names it (a checkpoint copied into another
/// run's folder would mix that run's frames with its own).
inline constexpr const char* kRunMarkerFile = "run.json";

/// A new run's identity: 128 random bits as 32 hex digits.
std::string new_run_id();
/// Is `id` what new_run_id makes?
bool valid_run_id(std::string_view id);

/// Makes `out` ready for frames: refuses an empty path (InputError), refuses an out/frames that is a
/// symbolic link (planted there, it would redirect every frame), creates out/frames, removes the
/// temporaries of writes killed half-way (io::remove_stale_temporaries, in out and out/frames) and the
/// frames of an earlier run whose names start with one of `stale` ("particles_", "grid_", "surface_"),
/// so the folder never mixes two runs. A resumed run passes keep_below = the number of frames its
/// checkpoint lists: those stay.
void prepare_frames_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale,
                           int keep_below = 0);

/// A new run: removes what an earlier run left at the top of the folder that this run may not rewrite
/// (its .pvd collections, checkpoint, picture), writes the marker run.json with `run_id`. Either way
/// writes a summary.json saying "running": a folder always describes the run that last wrote to it,
/// even if this one is killed before its summary.
void start_run_folder(const std::filesystem::path& out, const nlohmann::json& what, bool resumed,
                      const std::string& run_id);

/// A resumed run: checks that the folder's run.json names `run_id`, the id in the checkpoint's record
/// (InputError naming both otherwise), before anything in the folder is touched.
/// The checkpoint pieces in `dir` (checkpoint_sSTEP_pRANK.eddy, eddy::checkpoint_piece_name) of process
/// `rank` but the file `keep`, and those of every process from `beyond` on (a run resumed on fewer processes
/// than wrote its pieces): after a new index, particles' and grids' alike.
void drop_checkpoint_pieces(const std::filesystem::path& dir, const std::string& keep, int rank, int beyond);

void check_run_marker(const std::filesystem::path& out, const std::string& run_id);

/// The run folder made ready, in order: check_run_marker (resumed), prepare_frames_folder,
/// start_run_folder. The one call of both run loops.
void open_run_folder(const std::filesystem::path& out, std::initializer_list<const char*> stale, int frames_kept,
                     const nlohmann::json& what, bool resumed, const std::string& run_id);

/// A frame file name as a run writes it and its record lists it: "frames/NAME" with NAME one component
/// of letters, digits, '_', '-' and '.', not starting with '.'. A checkpoint's record is untrusted: no
/// other name (a folder, "..", an absolute path) is accepted from it.
bool valid_frame_file(std::string_view name);

/// Reads a checkpoint's run record (untrusted: the checkpoint may be crafted) key by key: every getter
/// checks presence, type and range and throws InputError "WHERE: corrupt checkpoint: run record key
/// 'KEY': WHAT; allowed: ..." on one line.
class RecordReader {
public:
    RecordReader(const nlohmann::json& record, std::string where);
    const nlohmann::json& json() const { return m_rec; }
    bool has(const char* key) const { return m_rec.contains(key); }
    /// A finite number within [lo, hi].
    double number(const char* key, double lo, double hi) const;
    /// A whole number within [lo, hi].
    std::uint64_t count(const char* key, std::uint64_t lo, std::uint64_t hi) const;
    bool flag(const char* key) const;
    bool flag(const char* key, bool fallback) const { return has(key) ? flag(key) : fallback; }
    /// One of `allowed`.
    std::string choice(const char* key, std::initializer_list<const char*> allowed) const;
    /// A list (at most `max` long) of distinct members of `allowed`.
    std::vector<std::string> choices(const char* key, std::initializer_list<const char*> allowed,
                                     std::size_t max = 16) const;
    /// An array of length n (or any length up to max_n when n is SIZE_MAX).
    const nlohmann::json& array(const char* key, std::size_t n = SIZE_MAX, std::size_t max_n = SIZE_MAX) const;
    /// The checks of a value inside an array or object of the record, named `what` in the message.
    double number_at(const nlohmann::json& v, const std::string& what, double lo, double hi) const;
    std::uint64_t count_at(const nlohmann::json& v, const std::string& what, std::uint64_t hi) const;
    std::string frame_file_at(const nlohmann::json& v, const std::string& what) const;
    [[noreturn]] void fail(const std::string& key, const std::string& what) const;
    const std::string& where() const { return m_where; }

private:
    const nlohmann::json& at(const char* key) const;
    const nlohmann::json& m_rec;
    std::string m_where;
};

/// The frames a checkpoint's record lists (index, time, files), checked against the run's clock: index
/// k at k, times from time0 one frame interval apart (1/fps) and not past `now`, files valid_frame_file.
/// `extra` names a per-frame number to read too ("volume", or the density errors), appended to `numbers`.
struct RecordFrame {
    int index = 0;
    double time = 0.0;
    std::vector<std::string> files;
    std::vector<double> numbers;
};
std::vector<RecordFrame> read_record_frames(const RecordReader& r, double time0, double fps, double now,
                                            std::initializer_list<const char*> extra);
/// A .pvd collection of a record: [time, file] pairs, each file one of `frames`' files.
std::vector<std::pair<double, std::string>> read_record_pvd(const RecordReader& r, const char* key,
                                                            const std::vector<RecordFrame>& frames);

/// A grid run's record (src/shallow/run_loop.hpp), every key checked against the grid's clock (time,
/// steps): InputError naming `where` otherwise.
struct GridRecord {
    double end_time = 0.0, fps = 0.0;
    std::vector<std::string> formats;
    bool render = false, pieces = false;
    UpAxis up = UpAxis::z;  // checkpoints written before the key existed: z up, what those runs wrote
    std::string run_id;
    double time0 = 0.0;
    std::uint64_t steps0 = 0;
    int next_frame = 1;
    double volume0 = 0.0;
    std::vector<RecordFrame> frames;  // numbers[0]: the frame's water volume
    std::vector<std::pair<double, std::string>> pvd;
    double step_seconds = 0.0, max_speed = 0.0, max_depth = 0.0, wall_before = 0.0;
    std::size_t clamped = 0;
};
GridRecord read_grid_record(const nlohmann::json& record, const std::string& where, double time, std::uint64_t steps);

/// A particle run's record checked as run() checks it when it resumes, without running (for the fuzz
/// target: every key, the frames against the simulation's clock). InputError naming `where`.
void check_particle_record(const Simulation& simulation, const nlohmann::json& record, const std::string& where);

/// The run record's id: 32 hex digits (InputError through r.fail otherwise).
std::string read_run_id(const RecordReader& r);

/// Does the run loop's next landing (frame next_frame of a run from time0 at fps, or the run's end,
/// whichever comes first) fall on the end rather than on a frame time? Then the steps before it are cut
/// to land there, off the path a longer run takes: a checkpoint written on that stretch could not be
/// extended bit for bit, so the loops write one as the stretch begins and none on it (issue 29, item 9).
bool lands_off_frame(double time0, double fps, int next_frame, double end_time);

/// The progress of a run between time0 and end_time (or max_steps), with an ETA from the fraction done.
Progress make_progress(double time, double time0, double end_time, std::uint64_t steps, std::uint64_t max_steps,
                       std::size_t count, const char* counted, double wall_seconds, int frames, bool finished);

/// The fluid's loads on the boundary objects (eddy/wall_loads.hpp) in the run's files
/// (src/sim/forces_output.cpp): out/forces.csv, "time,object,fx,fy,fz,tx,ty,tz", one row per frame after
/// the first (its loads are the mean over the steps since the previous frame) and per object, rewritten
/// atomically at every frame; in a record or summary, [[fx, fy, fz, tx, ty, tz], ...] per object.
void write_forces_csv(const std::filesystem::path& file, const std::vector<FrameRecord>& frames);
nlohmann::json loads_json(const std::vector<ObjectLoad>& loads);
/// Summary form: [{"object": o, "force": [...], "torque": [...]}, ...].
nlohmann::json loads_summary(const std::vector<ObjectLoad>& loads);
/// A record's loads (`v`, named `what`): `objects` rows of 6 finite numbers, or InputError through r.
std::vector<ObjectLoad> loads_from_record(const RecordReader& r, const nlohmann::json& v, const std::string& what,
                                          std::size_t objects);

/// The bodies (eddy/bodies.hpp) in the run's files (src/sim/bodies_output.cpp): out/bodies.csv,
/// "time,body,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz,fx,fy,fz,tx,ty,tz", one row per frame and body: the
/// pose and velocities at the frame, the fluid's force and torque (about the centre of mass) the mean
/// over the steps since the previous frame (0 at the first frame), rewritten atomically at every frame;
/// in a record [[13 numbers of BodyState], ...] per body.
void write_bodies_csv(const std::filesystem::path& file, const std::vector<FrameRecord>& frames,
                      const std::vector<std::uint16_t>& objects);
nlohmann::json bodies_json(const std::vector<BodyState>& bodies);
std::vector<BodyState> bodies_from_record(const RecordReader& r, const nlohmann::json& v, const std::string& what,
                                          std::size_t bodies);

/// summary.json "passes": each named pass of `steps` steps (their seconds summed in `p`), in the order a step
/// runs them: seconds, milliseconds per step and share of the passes' time.
nlohmann::json passes_json(const PassTimes& p, std::uint64_t steps);

}  // namespace eddy::detail
