#pragma once
// The calibration journal: an append-only JSON-lines file next to the profile that keeps every measurement,
// so that an interrupted calibration resumes, a profile can be re-derived with other thresholds, and a report
// can be drawn. One header line (the calibration's parameters and topology fingerprint), then measurement
// lines and job lines, in the order they happened. The format is specified in docs/journal.md and is stable:
// readers ignore fields and line types they do not know.
//
// Thread-safety: a JournalWriter is used by one thread; separate processes write separate journal parts
// (one per job), which the orchestrator merges.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/input_file.hpp"

#include "common/run_lock.hpp"
#include "profiles/job_layout.hpp"
#include "runners/process_setting.hpp"
#include "runners/runner.hpp"

namespace autotune::search {

// A journal holds a few hundred bytes per measurement: a million of them stay well under the cap.
inline constexpr InputKind kJournalInput{"a journal", uint64_t{1} << 30};

inline constexpr std::string_view kJournalFormat = "nccl-autotune-journal";
inline constexpr int kJournalVersion = 1;

// First line of a journal: what was asked and of what.
struct JournalHeader {
  int version = kJournalVersion;
  std::string created;  // RFC 3339, UTC
  std::string tool_version;
  std::string command;                         // the command line, for provenance
  std::string source;                          // "measured", "simulated" or "imported"
  std::string runner;                          // the runner's one-line description
  std::string nccl_version;                    // "2.28.9"
  std::string cluster;                         // cluster name (example name or topology file)
  std::string fingerprint;                     // topology fingerprint
  std::vector<std::string> fingerprint_facts;  // what it hashes (topology/fingerprint.hpp)
  std::string gpu_model;
  int nodes = 0;
  int gpus_per_node = 0;
  int nics_per_node = 0;  // from the probe; 0 when not known
  std::string strategy;   // "exhaustive", "adaptive", "imported"
  std::vector<nccl::Collective> collectives;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  std::vector<int> channels;  // channel counts swept; empty = NCCL decides
  std::vector<runners::Scale> scales;
  std::vector<runners::ProcessSetting> settings;
  uint64_t seed = 0;  // simulator seed (0 when measured)
  int repetitions = 0;
  // What the health gate saw (check/cluster_health.hpp): a summary, the nodes left out, every finding, and
  // the fabric settings every node agreed on (written into the profile's [env]).
  std::string health;
  std::vector<std::string> excluded_nodes;
  std::vector<std::string> health_findings;
  std::map<std::string, std::string> fabric_env;
  // Each node's host name, in the calibration's node order (after the nodes the gate left out), where the
  // health gate learned them all; empty otherwise (--ignore-health, the simulator, older journals).
  std::vector<std::string> hosts;
  // The parallel layout the calibration was given (--parallelism): its group kinds, their shapes and
  // operations; absent for shapes named otherwise and in journals written before it was kept.
  std::optional<profiles::JobLayout> layout;
};

// One measurement of one candidate at one size, in one job (process-wide setting) at one scale.
struct JournalRecord {
  runners::ProcessSetting setting;
  runners::Scale scale;
  // How many identical requests (same setting, scale, collective, bytes, candidate, repetitions) came before
  // this one in the calibration: lets --resume replay a strategy's requests one for one.
  int attempt = 0;
  runners::Measurement measurement;
  std::string source;  // "measured", "simulated", "imported"
  std::string runner;
  std::string time;  // RFC 3339, UTC, when the batch finished
  // Imported records: the busbw nccl-tests printed for each half (out-of-place, in-place), beside the two
  // times in measurement.times_us; empty otherwise.
  std::vector<double> published_busbw_gbps = {};
  // Production records: the learn transaction that folded them in (empty otherwise), so that a learn
  // finished after a kill appends only what the killed one did not.
  std::string learn_id = {};
  // A one-node shape under a setting that cannot change it (runners::reaches_one_node): the id of the
  // setting it was measured under, whose measurement counts here too; empty otherwise.
  std::string measured_under = {};
  // A scale measured beside others on a part of the allocation (calibrate/concurrent_scales.hpp): the
  // allocation's nodes it ran on, "512-767"; empty when it had the whole job to itself.
  std::string nodes_used = {};
};

// JournalRecord::nodes_used's text: "512-767" for nodes first .. first + count - 1, "3" for one node; and
// read back, nullopt when the text is neither (FIRST <= LAST, at most 9 digits each).
struct NodeSpan {
  int first = 0;
  int count = 0;
};
std::string node_range(const NodeSpan& span);
std::optional<NodeSpan> parse_node_range(std::string_view text);

// A job (one process-wide setting) started, finished or failed; `detail` holds the failed job's output.
struct JournalJobEvent {
  std::string job;     // ProcessSetting::id
  std::string status;  // "started", "finished", "failed", "skipped"
  std::string detail;
  std::string time;
};

struct JournalEntry {
  int line = 0;  // 1-based line in the file
  std::variant<JournalHeader, JournalRecord, JournalJobEvent> value;
  const JournalHeader* header() const { return std::get_if<JournalHeader>(&value); }
  const JournalRecord* record() const { return std::get_if<JournalRecord>(&value); }
  const JournalJobEvent* job_event() const { return std::get_if<JournalJobEvent>(&value); }
};

// One line of JSON, without the newline.
std::string to_json_line(const JournalHeader& header);
std::string to_json_line(const JournalRecord& record);
std::string to_json_line(const JournalJobEvent& event);

// What no journal may hold, judged by the same code before a record is written and after it is read: a
// scale outside 1 <= nodes <= ranks <= 2^20, channels outside 0..64, a time or bandwidth that is not a
// finite number in 0..1e9 us (0..1e6 GB/s), negative repetitions or attempts, no source. nullopt when the
// record is whole; else what is wrong, as "expected ..., found ...".
std::optional<std::string> record_problem(const JournalRecord& record);

// Parses one line. Returns nullopt for a line of a type this version does not know (to be skipped). Throws
// InputError(file, line, ...) for a line that is not valid JSON, lacks a required field, or holds a record
// record_problem() refuses.
std::optional<JournalEntry> parse_journal_line(std::string_view text, const std::string& file, int line);

// Reads a whole journal. A last line without its newline that does not parse is a write torn by a crash and
// is ignored. Any other bad line is skipped and said in `skipped` ("file:line: what (line skipped)"), so
// that one bad line (a hand edit, an older writer's bug) costs that line and not the whole journal; with
// `skipped` null it throws InputError naming the file and line instead. A first line that is not a journal
// header of this format, a missing file, or one that cannot be read throw in either case.
std::vector<JournalEntry> read_journal(const std::filesystem::path& path,
                                       std::vector<std::string>* skipped = nullptr);

// Convenience over read_journal (bad lines skipped): the header (nullopt if the journal has none), the
// records, and the lines skipped, for the caller to warn about.
struct JournalContents {
  std::optional<JournalHeader> header;
  std::vector<JournalRecord> records;
  std::vector<JournalJobEvent> job_events;
  std::vector<std::string> skipped;
};
JournalContents load_journal(const std::filesystem::path& path);

// A journal that cannot be written (a full disk, a lost file system): the calibration cannot go on, since
// nothing it measured from then on would be kept.
struct JournalWriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Appends lines to a journal file. Opening an existing journal first cuts a torn last line (one without its
// newline) so that appended lines start clean. Every write call writes whole lines and hands them to the
// operating system before returning (fflush): a killed process loses at most the batch it was measuring. A
// write that fails throws JournalWriteError; a line it cut short is cut off by the next writer. A record
// record_problem() refuses throws std::invalid_argument before anything of its batch is written.
// The file is synced to disk (fdatasync) when the writer closes; syncing every batch cost more than the
// simulator's measurements themselves.
class JournalWriter {
 public:
  explicit JournalWriter(const std::filesystem::path& path);
  ~JournalWriter();
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;

  void write(const JournalHeader& header);
  void write(std::span<const JournalRecord> batch);
  void write(const JournalJobEvent& event);
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_lines(const std::string& text);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// Where the job parts of an orchestrated calibration live: the folder <journal stem>.parts beside it.
std::filesystem::path journal_parts_dir(const std::filesystem::path& journal);

// Before a fresh calibration writes `journal`, what an earlier one left there is kept, never truncated: the
// journal is renamed beside itself with its time, <stem>.<time>.jsonl (the time its header says that
// calibration started, else the file's modification time, as 20261130T043715Z; -2, -3 ... when taken), and
// its folder of job parts likewise. The one place that decides a fresh journal: tune() and the orchestrator
// both start here. Returns what was kept where, for saying so; nullopt when there was nothing (an empty
// file is removed).
struct KeptJournal {
  std::filesystem::path journal;  // empty when there was only a parts folder
  std::filesystem::path parts;    // empty when there was none
  std::string describe() const;   // "previous journal kept as ..."
};
std::optional<KeptJournal> keep_previous_journal(const std::filesystem::path& journal);

// One writer per journal: a calibration (tune, its orchestrator) and learn's fold into it hold the lock
// beside it, <journal>.lock (common/run_lock.hpp), from before the journal is kept aside or opened until
// the profile is saved. Creates the journal's folder. A held lock throws InputError naming its holder.
RunLock lock_journal(const std::filesystem::path& journal, const std::string& what);

}  // namespace autotune::search
