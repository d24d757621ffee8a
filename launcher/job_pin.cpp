#include "launcher/job_pin.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/input_file.hpp"
#include "profiles/store.hpp"

namespace autotune::launcher {
namespace fs = std::filesystem;
namespace {

std::string text_of(const JobPin& pin) {
  return "profile=" + pin.profile.string() + "\ndigest=" + pin.digest + "\n";
}

std::optional<JobPin> parse(const std::string& text) {
  JobPin pin;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("profile=", 0) == 0) pin.profile = line.substr(8);
    if (line.rfind("digest=", 0) == 0) pin.digest = line.substr(7);
  }
  if (pin.profile.empty() || pin.digest.size() != 16) return std::nullopt;
  return pin;
}

void remove_stale(const fs::path& dir) {
  std::error_code ec;
  const auto week_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 7);
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".pin") continue;
    auto when = fs::last_write_time(e.path(), ec);
    if (!ec && when < week_ago) fs::remove(e.path(), ec);
  }
}

}  // namespace

fs::path pin_directory(const fs::path& store, const EnvLookup& env) {
  auto set = [&](const char* n) -> std::optional<std::string> {
    auto v = env(n);
    return v && !v->empty() ? v : std::nullopt;
  };
  if (auto d = set("NCCL_AUTOTUNE_PIN_DIR")) return *d;
  if (::access(store.c_str(), W_OK) == 0) return store / "jobs";
  if (auto c = set("XDG_CACHE_HOME")) return fs::path(*c) / "nccl-autotune" / "jobs";
  if (auto h = set("HOME")) return fs::path(*h) / ".cache" / "nccl-autotune" / "jobs";
  return store / "jobs";
}

fs::path pin_path(const fs::path& dir, const std::string& job_id) {
  return dir / (profiles::sanitize_file_name(job_id) + ".pin");
}

std::optional<JobPin> pin_job(const fs::path& dir, const std::string& job_id, const JobPin& mine,
                              std::string* note) {
  const fs::path pin = pin_path(dir, job_id);
  std::error_code ec;
  if (!fs::exists(pin, ec)) {
    fs::create_directories(pin.parent_path(), ec);
    // The whole record first, then one link: a rank that sees the pin sees all of it, and of two racing
    // ranks exactly one link succeeds.
    const fs::path mine_file =
        pin.parent_path() / ("." + pin.filename().string() + "." + std::to_string(::getpid()));
    try {
      write_file_atomically(mine_file, text_of(mine));
      if (::link(mine_file.c_str(), pin.c_str()) == 0)
        remove_stale(pin.parent_path());
      else if (errno != EEXIST)
        *note = "cannot pin the job's profile in " + pin.parent_path().string() + ": " + std::strerror(errno);
    } catch (const std::exception& e) {
      *note = std::string("cannot pin the job's profile: ") + e.what();
    }
    fs::remove(mine_file, ec);
    if (!note->empty()) return std::nullopt;
  }
  std::string text;
  try {
    text = read_file(pin);
  } catch (const std::exception& e) {
    *note = std::string("cannot read the job's pin: ") + e.what();
    return std::nullopt;
  }
  auto parsed = parse(text);
  if (!parsed) *note = "the job's pin " + pin.string() + " is not one this tool wrote: ignored";
  return parsed;
}

}  // namespace autotune::launcher
