#include "tests/standin/cudart/copy_work.hpp"

#include <cstring>

#include "tests/standin/cudart/memory.hpp"

namespace autotune::standin {

namespace {
constexpr double kLaunchUs = 2.0;
constexpr double kPcieGBps = 25.0;       // a PCIe Gen5 x16 copy as measured in practice
constexpr double kHbmCopyGBps = 1500.0;  // read + write of HBM3
constexpr double kHbmSetGBps = 2500.0;
double at(double gbps, size_t bytes) {
  return static_cast<double>(bytes) / (gbps * 1e3);
}
}  // namespace

double copy_cost_us(cudaMemcpyKind kind, size_t bytes) {
  if (kind == cudaMemcpyDeviceToDevice) return kLaunchUs + at(kHbmCopyGBps, bytes);
  if (kind == cudaMemcpyHostToHost) return kLaunchUs;
  return kLaunchUs + at(kPcieGBps, bytes);
}

double set_cost_us(size_t bytes) {
  return kLaunchUs + at(kHbmSetGBps, bytes);
}

CopyWork::CopyWork(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, bool stage)
    : dst_(dst), src_(src), bytes_(bytes), cost_us_(copy_cost_us(kind, bytes)) {
  if (stage) {
    staged_.assign(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
    src_ = staged_.data();
  }
}

double CopyWork::run(double start_us) noexcept {
  if (bytes_) std::memmove(dst_, src_, bytes_);
  return start_us + cost_us_;
}

double SetWork::run(double start_us) noexcept {
  if (bytes_) fill(dst_, value_, bytes_);
  return start_us + set_cost_us(bytes_);
}

double HostFunctionWork::run(double start_us) noexcept {
  fn_(data_);
  return start_us;
}

}  // namespace autotune::standin
