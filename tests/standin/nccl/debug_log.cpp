#include "tests/standin/nccl/debug_log.hpp"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace autotune::standin {

namespace {

struct Subsystem {
  const char* name;
  unsigned long flag;
};
constexpr Subsystem kSubsystems[] = {
    {"INIT", 0x1},    {"COLL", 0x2},    {"P2P", 0x4},          {"SHM", 0x8},     {"NET", 0x10},
    {"GRAPH", 0x20},  {"TUNING", 0x40}, {"ENV", 0x80},         {"ALLOC", 0x100}, {"CALL", 0x200},
    {"PROXY", 0x400}, {"NVLS", 0x800},  {"BOOTSTRAP", 0x1000}, {"REG", 0x2000},  {"PROFILE", 0x4000},
    {"RAS", 0x8000},  {"ALL", ~0ul}};

struct Config {
  int level = 0;
  unsigned long mask = kInit | kBootstrap | kEnv;
  std::string host;
  FILE* out = stdout;
};

// NCCL_DEBUG_FILE: a file name in which %h is the host name and %p the process id; stdout when unset or when
// the file cannot be opened (as NCCL does).
FILE* open_log(const char* pattern, const std::string& host) {
  if (pattern == nullptr || *pattern == '\0') return stdout;
  std::string name;
  for (const char* c = pattern; *c; ++c) {
    if (c[0] == '%' && c[1] == 'h')
      name += host, ++c;
    else if (c[0] == '%' && c[1] == 'p')
      name += std::to_string(getpid()), ++c;
    else
      name += *c;
  }
  FILE* f = std::fopen(name.c_str(), "w");
  return f ? f : stdout;
}

int parse_level(const char* v) {
  if (v == nullptr) return 0;
  if (!strcasecmp(v, "VERSION")) return kLogVersion;
  if (!strcasecmp(v, "WARN")) return kLogWarn;
  if (!strcasecmp(v, "INFO")) return kLogInfo;
  if (!strcasecmp(v, "TRACE")) return kLogTrace;
  return 0;  // NCCL ignores a value it does not know
}

unsigned long parse_mask(const char* v) {
  if (v == nullptr) return kInit | kBootstrap | kEnv;
  std::string text = v;
  bool invert = !text.empty() && text[0] == '^';
  if (invert) text.erase(0, 1);
  unsigned long mask = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    for (const auto& s : kSubsystems)
      if (!strcasecmp(item.c_str(), s.name)) mask |= s.flag;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return invert ? ~mask : mask;
}

const Config& config() {
  // Never destroyed: stream workers may log while the process exits.
  static const Config& c = *new Config([] {
    Config c;
    c.level = parse_level(std::getenv("NCCL_DEBUG"));
    c.mask = parse_mask(std::getenv("NCCL_DEBUG_SUBSYS"));
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    c.host = host;
    c.host = c.host.substr(0, c.host.find('.'));
    c.out = open_log(std::getenv("NCCL_DEBUG_FILE"), c.host);
    return c;
  }());
  return c;
}

std::mutex& warning_mutex() {
  static auto* m = new std::mutex();
  return *m;
}
std::string& warning_text() {
  static auto* s = new std::string();
  return *s;
}

thread_local int log_device = 0;

}  // namespace

bool log_enabled(int level, unsigned long flags) {
  const Config& c = config();
  if (level > c.level) return false;
  return level != kLogInfo && level != kLogTrace ? true : (flags & c.mask) != 0;
}

void vlog(int level, unsigned long flags, const char* file, int line, const char* fmt, va_list args) {
  va_list copy;
  va_copy(copy, args);
  std::vector<char> text(1024);
  int n = std::vsnprintf(text.data(), text.size(), fmt, copy);
  va_end(copy);
  if (n >= static_cast<int>(text.size())) {
    text.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(text.data(), text.size(), fmt, args);
  }
  if (level == kLogWarn) {
    std::lock_guard lock(warning_mutex());
    warning_text() = text.data();
  }
  if (!log_enabled(level, flags)) return;
  const Config& c = config();
  const long tid = syscall(SYS_gettid);
  if (level == kLogVersion) {
    std::fprintf(c.out, "%s\n", text.data());
  } else if (level == kLogWarn) {
    const char* base = file ? std::strrchr(file, '/') : nullptr;
    std::fprintf(c.out, "%s:%d:%ld [%d] %s:%d NCCL WARN %s\n", c.host.c_str(), getpid(), tid, log_device,
                 base ? base + 1 : (file ? file : "?"), line, text.data());
  } else {
    std::fprintf(c.out, "%s:%d:%ld [%d] NCCL %s %s\n", c.host.c_str(), getpid(), tid, log_device,
                 level == kLogTrace ? "TRACE" : "INFO", text.data());
  }
  std::fflush(c.out);
}

void log(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vlog(level, flags, file, line, fmt, args);
  va_end(args);
}

void set_log_device(int device) {
  log_device = device;
}

std::string last_warning() {
  std::lock_guard lock(warning_mutex());
  return warning_text();
}

}  // namespace autotune::standin
