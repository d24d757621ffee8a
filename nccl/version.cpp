#include "nccl/version.hpp"

#include <dlfcn.h>

#include <charconv>

namespace autotune::nccl {
namespace {

std::optional<int> number(std::string_view s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

std::optional<Version> Version::from_code(int code) {
  if (code <= 0) return std::nullopt;
  // The encoding changed at 2.9 (NCCL_VERSION_CODE 2900 before, 20900 after): four-digit codes are the old
  // one.
  if (code < 10000) return Version{code / 1000, code / 100 % 10, code % 100};
  return Version{code / 10000, code / 100 % 100, code % 100};
}

std::optional<Version> Version::parse(std::string_view text) {
  size_t a = text.find('.');
  if (a == std::string_view::npos) return std::nullopt;
  size_t b = text.find('.', a + 1);
  auto major = number(text.substr(0, a));
  auto minor = number(text.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1));
  std::optional<int> patch = 0;
  if (b != std::string_view::npos) patch = number(text.substr(b + 1));
  if (!major || !minor || !patch || *minor > 99 || *patch > 99) return std::nullopt;
  return Version{*major, *minor, *patch};
}

std::string Version::text() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string Version::major_minor_text() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<Version> runtime_version(const std::string& library, std::string* why) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    if (why) *why = dlerror();
    return std::nullopt;
  }
  using GetVersion = int (*)(int*);
  auto get = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"));
  int code = 0;
  std::optional<Version> v;
  if (get && get(&code) == 0) v = Version::from_code(code);
  if (!v && why) *why = get ? "ncclGetVersion failed" : "no ncclGetVersion in " + library;
  dlclose(lib);
  return v;
}

}  // namespace autotune::nccl
