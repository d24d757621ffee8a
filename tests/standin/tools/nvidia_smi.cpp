// A stand-in for the two nvidia-smi queries the gpu-labelled check scripts make, answered from the stand-in
// CUDA runtime's devices (scripts/standin.sh puts it on PATH): `nvidia-smi -L` and
// `nvidia-smi --query-gpu=name,pci.bus_id,... --format=csv[,noheader]`. Like nvidia-smi it lists every GPU
// of the node whatever CUDA_VISIBLE_DEVICES says. Anything else: exit status 2 with a line saying what is
// supported.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string bus_id(const cudaDeviceProp& p) {
  char text[32];
  std::snprintf(text, sizeof text, "%08X:%02X:%02X.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  return text;
}

std::string uuid(const cudaDeviceProp& p) {
  std::string out = "GPU-";
  const unsigned char* b = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
  for (int i = 0; i < 16; ++i) {
    char h[3];
    std::snprintf(h, sizeof h, "%02x", b[i]);
    out += h;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
  return out;
}

std::string field(const cudaDeviceProp& p, int index, const std::string& name) {
  if (name == "name") return p.name;
  if (name == "pci.bus_id") return bus_id(p);
  if (name == "index") return std::to_string(index);
  if (name == "uuid") return uuid(p);
  if (name == "memory.total") return std::to_string(p.totalGlobalMem >> 20) + " MiB";
  return "";
}

int unsupported(const char* what) {
  std::fprintf(
      stderr,
      "nvidia-smi (stand-in): %s: supported are -L and --query-gpu=index,name,uuid,pci.bus_id,memory.total "
      "--format=csv[,noheader]\n",
      what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  unsetenv("CUDA_VISIBLE_DEVICES");  // nvidia-smi lists the node's GPUs, not the process's
  std::vector<std::string> args(argv + 1, argv + argc);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  std::vector<cudaDeviceProp> props(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) cudaGetDeviceProperties(&props[static_cast<size_t>(i)], i);
  if (args.size() == 1 && args[0] == "-L") {
    if (count == 0) {
      std::printf("No devices found.\n");
      return 6;
    }
    for (int i = 0; i < count; ++i)
      std::printf("GPU %d: %s (UUID: %s)\n", i, props[static_cast<size_t>(i)].name,
                  uuid(props[static_cast<size_t>(i)]).c_str());
    return 0;
  }
  std::string query, format;
  for (const auto& a : args) {
    if (a.rfind("--query-gpu=", 0) == 0)
      query = a.substr(12);
    else if (a.rfind("--format=", 0) == 0)
      format = a.substr(9);
    else
      return unsupported(a.c_str());
  }
  if (query.empty() || (format != "csv" && format != "csv,noheader")) return unsupported("this query");
  static const std::vector<std::string> kKnown = {"index", "name", "uuid", "pci.bus_id", "memory.total"};
  std::vector<std::string> names;
  for (size_t start = 0;;) {
    size_t comma = query.find(',', start);
    names.push_back(query.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (std::find(kKnown.begin(), kKnown.end(), names.back()) == kKnown.end())
      return unsupported(names.back().c_str());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (format == "csv")
    for (size_t k = 0; k < names.size(); ++k) std::printf("%s%s", k ? ", " : "", names[k].c_str());
  if (format == "csv") std::printf("\n");
  for (int i = 0; i < count; ++i) {
    for (size_t k = 0; k < names.size(); ++k)
      std::printf("%s%s", k ? ", " : "", field(props[static_cast<size_t>(i)], i, names[k]).c_str());
    std::printf("\n");
  }
  return 0;
}
