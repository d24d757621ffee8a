// NCCL version codes and texts: both encodings NCCL has used, and what profiles keep per major.minor.
#include <catch2/catch.hpp>

#include "nccl/version.hpp"

using autotune::nccl::Version;

TEST_CASE("version codes of both encodings", "[version]") {
  CHECK(Version::from_code(22809)->text() == "2.28.9");
  CHECK(Version::from_code(23007)->text() == "2.30.7");
  CHECK(Version::from_code(21903)->major_minor() == 219);
  // Before 2.9: major*1000 + minor*100 + patch (2.8.4 was 2804).
  CHECK(Version::from_code(2804)->text() == "2.8.4");
  CHECK(Version::from_code(20900)->text() == "2.9.0");
  CHECK_FALSE(Version::from_code(0));
  CHECK_FALSE(Version::from_code(-5));
  CHECK(Version::from_code(22809)->code() == 22809);
}

TEST_CASE("version texts", "[version]") {
  CHECK(Version::parse("2.28.9") == Version{2, 28, 9});
  CHECK(Version::parse("2.28") == Version{2, 28, 0});
  CHECK(Version::parse("2.28.9")->major_minor_text() == "2.28");
  for (const char* bad : {"", "2", "2.", ".28", "2.28.", "2.28.9.1", "2.x.9", "2.28.9-1", "v2.28", "2.100"})
    CHECK_FALSE(Version::parse(bad));
  CHECK(*Version::parse("2.30.7") > *Version::parse("2.28.9"));
  CHECK(Version::parse("2.28.1")->same_major_minor(*Version::parse("2.28.9")));
}

TEST_CASE("the version of a library the process would load", "[version]") {
  std::string why;
  CHECK_FALSE(autotune::nccl::runtime_version("libno-such-nccl.so.2", &why));
  CHECK(why.find("libno-such-nccl.so.2") != std::string::npos);
  // libm has no ncclGetVersion.
  why.clear();
  CHECK_FALSE(autotune::nccl::runtime_version("libm.so.6", &why));
  CHECK(why == "no ncclGetVersion in libm.so.6");
}
