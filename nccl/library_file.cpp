#include "nccl/library_file.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <vector>

namespace autotune::nccl {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kBanner = "NCCL version ";

template <typename T>
bool read_at(std::ifstream& in, uint64_t offset, T* out, size_t count = 1) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(sizeof(T) * count));
  return static_cast<bool>(in);
}

// The bytes of the section called `wanted` in a 64-bit little-endian ELF file; nullopt when it has none.
std::optional<std::string> elf_section(const fs::path& file, std::string_view wanted, std::string* why) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in || !read_at(in, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
    *why = file.string() + " is not a 64-bit ELF library";
    return std::nullopt;
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (sections.empty() || !read_at(in, header.e_shoff, sections.data(), sections.size()) ||
      header.e_shstrndx >= sections.size()) {
    *why = file.string() + " has no readable section headers";
    return std::nullopt;
  }
  const Elf64_Shdr& names_header = sections[header.e_shstrndx];
  std::string names(names_header.sh_size, '\0');
  if (!read_at(in, names_header.sh_offset, names.data(), names.size())) {
    *why = file.string() + " has no readable section names";
    return std::nullopt;
  }
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_name >= names.size() || std::string_view(names.c_str() + s.sh_name) != wanted) continue;
    std::string bytes(s.sh_size, '\0');
    if (s.sh_type == SHT_NOBITS || !read_at(in, s.sh_offset, bytes.data(), bytes.size())) break;
    return bytes;
  }
  *why = file.string() + " has no " + std::string(wanted) + " section";
  return std::nullopt;
}

}  // namespace

std::optional<Version> version_from_file_name(const std::string& name) {
  constexpr std::string_view kStem = "libnccl.so.";
  if (name.rfind(kStem, 0) != 0) return std::nullopt;
  const std::string rest = name.substr(kStem.size());
  if (std::count(rest.begin(), rest.end(), '.') != 2) return std::nullopt;  // "2" or "2.28" say too little
  return Version::parse(rest);
}

std::optional<Version> version_from_banner(std::string_view text) {
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  return Version::parse(text.substr(0, end));
}

std::optional<Version> library_file_version(const fs::path& file, std::string* why) {
  std::error_code ec;
  const fs::path real = fs::canonical(file, ec);
  if (ec) {
    *why = file.string() + ": " + ec.message();
    return std::nullopt;
  }
  if (auto v = version_from_file_name(real.filename().string())) return v;
  auto rodata = elf_section(real, ".rodata", why);
  if (!rodata) return std::nullopt;
  for (size_t at = rodata->find(kBanner); at != std::string::npos; at = rodata->find(kBanner, at + 1))
    if (auto v = version_from_banner(std::string_view(*rodata).substr(at + kBanner.size(), 16))) return v;
  *why = real.string() + " carries no \"" + std::string(kBanner) + "\" banner: not a libnccl";
  return std::nullopt;
}

}  // namespace autotune::nccl
