#include "nccl/env_policy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>

#include "common/input_error.hpp"
#include "common/text.hpp"
#include "nccl/algo_proto_spec.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "nccl/socket_ifname_spec.hpp"

namespace autotune::nccl {
namespace {

enum class Kind { integer, path_level, ib_hca, socket_ifname, algo, proto };

struct Allowed {
  std::string_view key;
  Kind kind;
  long long min = 0, max = 0;  // for integers
  long long multiple_of = 1;
};

// NCCL's path types as NCCL_P2P_LEVEL / NCCL_NET_GDR_LEVEL accept them by name: ncclGetLevel (2.28-2.30,
// src/graph/paths.cc) compares with topoPathTypeStr up to PATH_SYS only, so NET and DIS are not read. A
// number is the old numbering 0..5 (LOC, PIX, PXB, PHB, SYS, SYS); NCCL clamps a larger one to SYS.
constexpr std::array<std::string_view, 10> kPathLevels = {"LOC", "NVL", "NVB", "C2C", "PIX",
                                                          "PXB", "P2C", "PXN", "PHB", "SYS"};
// NCCL_STEPS: a point-to-point chunk larger than NCCL_BUFFSIZE / 8 is cut to it (computeBuffSizes).
constexpr long long kNcclSteps = 8;
constexpr long long kDefaultBuffSize = 4LL << 20;

// Sorted by key.
constexpr std::array<Allowed, 28> kAllowed = {{
    {"NCCL_ALGO", Kind::algo},
    // Every channel to every peer allocates this much GPU memory; 64 MiB (16 times NCCL's default) is as far
    // as a shared profile may push every job on the cluster.
    {"NCCL_BUFFSIZE", Kind::integer, 4096, 64LL << 20},
    {"NCCL_COLLNET_ENABLE", Kind::integer, 0, 1},
    {"NCCL_CROSS_NIC", Kind::integer, 0, 2},
    {"NCCL_IB_ADAPTIVE_ROUTING", Kind::integer, 0, 1},
    // A GID table has at most 256 entries; NCCL reads -1 (its default from 2.21: choose per port) too, which
    // a profile has no reason to set.
    {"NCCL_IB_GID_INDEX", Kind::integer, 0, 255},
    {"NCCL_IB_HCA", Kind::ib_hca},
    {"NCCL_IB_PCI_RELAXED_ORDERING", Kind::integer, 0, 2},
    {"NCCL_IB_QPS_PER_CONNECTION", Kind::integer, 1, 128},
    {"NCCL_IB_SPLIT_DATA_ON_QPS", Kind::integer, 0, 1},
    {"NCCL_MAX_NCHANNELS", Kind::integer, 1, 64},
    {"NCCL_MIN_NCHANNELS", Kind::integer, 1, 64},
    {"NCCL_NCHANNELS_PER_NET_PEER", Kind::integer, 1, 64},
    {"NCCL_NET_GDR_LEVEL", Kind::path_level, 0, 5},
    {"NCCL_NET_GDR_READ", Kind::integer, 0, 1},
    {"NCCL_NTHREADS", Kind::integer, 64, 512, 64},  // whole warps: NCCL ignores any other value
    {"NCCL_NVLS_ENABLE", Kind::integer, 0, 2},
    {"NCCL_P2P_DISABLE", Kind::integer, 0, 1},
    {"NCCL_P2P_LEVEL", Kind::path_level, 0, 5},
    // Point-to-point chunk sizes (NCCL 2.28-2.30 defaults 128 KiB, 512 KiB, 128 KiB): at most NCCL_BUFFSIZE's
    // cap over NCCL_STEPS, since NCCL cuts a larger one to NCCL_BUFFSIZE / 8 (env_set_problem checks the
    // pair).
    {"NCCL_P2P_NET_CHUNKSIZE", Kind::integer, 4096, (64LL << 20) / kNcclSteps},
    {"NCCL_P2P_NVL_CHUNKSIZE", Kind::integer, 4096, (64LL << 20) / kNcclSteps},
    {"NCCL_P2P_PCI_CHUNKSIZE", Kind::integer, 4096, (64LL << 20) / kNcclSteps},
    {"NCCL_P2P_PXN_LEVEL", Kind::integer, 0, 2},
    {"NCCL_PROTO", Kind::proto},
    {"NCCL_PXN_DISABLE", Kind::integer, 0, 1},
    {"NCCL_SHM_DISABLE", Kind::integer, 0, 1},
    {"NCCL_SOCKET_IFNAME", Kind::socket_ifname},
    {"NCCL_SOCKET_NTHREADS", Kind::integer, 1, 16},
}};

const Allowed* lookup(std::string_view key) {
  for (const auto& a : kAllowed)
    if (a.key == key) return &a;
  return nullptr;
}

[[noreturn]] void fail(std::string_view key, const std::string& expected, std::string_view found) {
  throw InputError("", 0,
                   std::string(key) + ": expected " + expected + "; found \"" + std::string(found) + "\"");
}

std::optional<long long> parse_integer(std::string_view v) {
  std::string_view digits = v;
  bool negative = false;
  if (!digits.empty() && digits.front() == '-') negative = true, digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 12) return std::nullopt;
  long long n = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return negative ? -n : n;
}

void check_integer(const Allowed& a, std::string_view value) {
  auto n = parse_integer(value);
  std::string range = "an integer " + std::to_string(a.min) + ".." + std::to_string(a.max);
  if (a.multiple_of > 1) range += " that is a multiple of " + std::to_string(a.multiple_of);
  if (!n || *n < a.min || *n > a.max || *n % a.multiple_of != 0) fail(a.key, range, value);
  // NCCL parses its integer variables with strtoll(..., 0): "010" is octal 8 and "0x10" is 16 there.
  const std::string_view digits = value.substr(value.front() == '-' ? 1 : 0);
  if (digits.size() > 1 && digits.front() == '0')
    fail(a.key, range + " without leading zeros (NCCL reads 010 as octal 8)", value);
}

}  // namespace

bool is_allowed_env_key(std::string_view key) {
  return lookup(key) != nullptr;
}

std::vector<std::string> allowed_env_keys() {
  std::vector<std::string> out;
  for (const auto& a : kAllowed) out.emplace_back(a.key);
  return out;
}

void check_env_entry(std::string_view key, std::string_view value) {
  if (key.substr(0, 3) == "LD_" || key == "NCCL_NET_PLUGIN" || key == "NCCL_TUNER_PLUGIN" ||
      key == "NCCL_PROFILER_PLUGIN" || key == "NCCL_ENV_PLUGIN")
    throw InputError("", 0,
                     std::string(key) +
                         ": expected an NCCL tuning variable; found a variable that loads code, "
                         "which a profile may never set");
  const Allowed* a = lookup(key);
  if (!a) {
    std::string keys;
    for (const auto& k : kAllowed) keys += (keys.empty() ? "" : ", ") + std::string(k.key);
    throw InputError("", 0, printable(key) + ": expected one of " + keys + "; found an unknown key");
  }
  for (char c : value) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      fail(key, "no control characters", hex);
    }
    if (u >= 0x80 || std::string_view(" \t$`\"'\\|&<>(){}[]*?!~#").find(c) != std::string_view::npos)
      fail(key, "no spaces, quotes or shell metacharacters", value);
  }
  if (value.size() > 1024) fail(key, "at most 1024 characters", value.substr(0, 32));
  switch (a->kind) {
    case Kind::integer:
      check_integer(*a, value);
      break;
    case Kind::path_level: {
      if (std::find(kPathLevels.begin(), kPathLevels.end(), value) != kPathLevels.end()) break;
      auto n = parse_integer(value);
      if (!n || *n < a->min || *n > a->max)
        fail(key, "a path level (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) or an integer 0..5",
             value);
      break;
    }
    case Kind::ib_hca:
      parse_ib_hca_spec(value);
      break;
    case Kind::socket_ifname:
      parse_socket_ifname_spec(value);
      break;
    case Kind::algo:
      parse_algo_spec(value);
      break;
    case Kind::proto:
      parse_proto_spec(value);
      break;
  }
}

namespace {

// A point-to-point chunk NCCL would cut to NCCL_BUFFSIZE / 8: the profile would not run what it says.
std::optional<EnvSetProblem> chunk_problem(const std::map<std::string, std::string>& env) {
  long long buffsize = kDefaultBuffSize;
  std::string buffer = "NCCL's default NCCL_BUFFSIZE 4194304";
  if (auto it = env.find("NCCL_BUFFSIZE"); it != env.end()) {
    auto v = parse_integer(it->second);
    if (!v) return std::nullopt;
    buffsize = *v;
    buffer = "NCCL_BUFFSIZE (" + it->second + ")";
  }
  for (const char* key : {"NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_P2P_PCI_CHUNKSIZE"}) {
    auto it = env.find(key);
    if (it == env.end()) continue;
    auto v = parse_integer(it->second);
    if (!v || *v * kNcclSteps <= buffsize) continue;
    return EnvSetProblem{key, std::string(key) + ": expected at most " + buffer +
                                  " / 8 = " + std::to_string(buffsize / kNcclSteps) +
                                  " (NCCL cuts a larger chunk to it); found \"" + it->second + "\""};
  }
  return std::nullopt;
}

}  // namespace

std::optional<EnvSetProblem> env_set_problem(const std::map<std::string, std::string>& env) {
  const auto min = env.find("NCCL_MIN_NCHANNELS"), max = env.find("NCCL_MAX_NCHANNELS");
  if (min != env.end() && max != env.end()) {
    const auto lo = parse_integer(min->second), hi = parse_integer(max->second);
    if (lo && hi && *lo > *hi)
      return EnvSetProblem{min->first, "NCCL_MIN_NCHANNELS: expected at most NCCL_MAX_NCHANNELS (" +
                                           max->second + "); found \"" + min->second + "\""};
  }
  return chunk_problem(env);
}

bool is_point_to_point_env_key(std::string_view key) {
  static constexpr std::string_view kPointToPoint[] = {
      "NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE",      "NCCL_P2P_PCI_CHUNKSIZE",
      "NCCL_BUFFSIZE",          "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_PXN_DISABLE",
      "NCCL_P2P_PXN_LEVEL",     "NCCL_IB_QPS_PER_CONNECTION",  "NCCL_NET_GDR_LEVEL",
      "NCCL_P2P_LEVEL"};
  return std::find(std::begin(kPointToPoint), std::end(kPointToPoint), key) != std::end(kPointToPoint);
}

}  // namespace autotune::nccl
