// Finding the job's libnccl the way its loader would, in a made-up file system of banner-only libraries.
#include <catch2/catch.hpp>
#include <map>

#include "launcher/job_nccl.hpp"
#include "support/temp_dir.hpp"
#include "tests/launcher/fake_environment.hpp"

using autotune::test::TempDir;

namespace fs = std::filesystem;
using namespace autotune::launcher;
using autotune::launcher::test::fake_environment;
using autotune::nccl::Version;

namespace {

// A root with /etc/ld.so.conf including ld.so.conf.d/*.conf, as Debian and RHEL have it.
struct Root {
  TempDir dir;
  fs::path root = dir.path();
  Root() {
    dir.write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    dir.write("etc/ld.so.conf.d/cuda.conf", "# CUDA\n/usr/local/cuda/lib64\n");
    dir.write("etc/ld.so.conf.d/x86_64.conf", "/usr/lib/x86_64-linux-gnu  # multiarch\n");
  }
  void install(const std::string& at, const char* library) const {
    fs::create_directories(root / at);
    fs::copy_file(library, root / at / "libnccl.so.2");
  }
};

}  // namespace

TEST_CASE("the search follows the loader: LD_LIBRARY_PATH, the Python environment, then the system",
          "[job_nccl]") {
  Root r;
  r.dir.write("venv/lib/python3.12/site-packages/nvidia/nccl/lib/.keep", "");
  auto path = nccl_search_path(fake_environment({{"LD_LIBRARY_PATH", "/opt/a::/opt/b"},
                                                 {"VIRTUAL_ENV", (r.root / "venv").string()},
                                                 {"NCCL_HOME", "/opt/nccl"}}),
                               r.root);
  std::vector<std::string> dirs;
  for (const auto& [d, how] : path) dirs.push_back(d.string() + " <- " + how);
  const std::string root = r.root.string();
  CHECK(
      dirs ==
      std::vector<std::string>{
          "/opt/a <- LD_LIBRARY_PATH",
          "/opt/b <- LD_LIBRARY_PATH",
          root + "/venv/lib/python3.12/site-packages/nvidia/nccl/lib <- VIRTUAL_ENV (the nvidia-nccl wheel)",
          "/opt/nccl/lib <- NCCL_HOME",
          root + "/usr/local/cuda/lib64 <- /etc/ld.so.conf.d/cuda.conf",
          root + "/usr/lib/x86_64-linux-gnu <- /etc/ld.so.conf.d/x86_64.conf",
          root + "/lib64 <- the loader's default directories",
          root + "/usr/lib64 <- the loader's default directories",
          root + "/lib <- the loader's default directories",
          root + "/usr/lib <- the loader's default directories",
      });
}

TEST_CASE("the first libnccl.so.2 found is the job's, read for its version", "[job_nccl]") {
  Root r;
  r.install("usr/local/cuda/lib64", AUTOTUNE_BANNER_NCCL_2_28);
  JobNccl system = find_job_nccl(fake_environment({}), r.root);
  REQUIRE(system.library);
  CHECK(*system.library == r.root / "usr/local/cuda/lib64/libnccl.so.2");
  CHECK(system.version == Version{2, 28, 9});
  CHECK(system.how == "/etc/ld.so.conf.d/cuda.conf");

  r.install("conda/lib/python3.11/site-packages/nvidia/nccl/lib", AUTOTUNE_BANNER_NCCL_2_27);
  JobNccl wheel = find_job_nccl(fake_environment({{"CONDA_PREFIX", (r.root / "conda").string()}}), r.root);
  CHECK(wheel.version == Version{2, 27, 3});
  CHECK(wheel.how == "CONDA_PREFIX (the nvidia-nccl wheel)");

  JobNccl named =
      find_job_nccl(fake_environment({{"NCCL_AUTOTUNE_NCCL_LIB", AUTOTUNE_BANNER_NCCL_2_27},
                                      {"LD_LIBRARY_PATH", (r.root / "usr/local/cuda/lib64").string()}}),
                    r.root);
  CHECK(named.version == Version{2, 27, 3});
  CHECK(named.how == "NCCL_AUTOTUNE_NCCL_LIB");
}

TEST_CASE("no libnccl, or one that cannot be read, says so", "[job_nccl]") {
  Root r;
  JobNccl none = find_job_nccl(fake_environment({}), r.root);
  CHECK_FALSE(none.library);
  CHECK_FALSE(none.version);
  CHECK(none.how.find("no libnccl.so.2 on LD_LIBRARY_PATH") == 0);

  r.dir.write("opt/broken/libnccl.so.2", "text");
  JobNccl broken =
      find_job_nccl(fake_environment({{"LD_LIBRARY_PATH", (r.root / "opt/broken").string()}}), r.root);
  REQUIRE(broken.library);
  CHECK_FALSE(broken.version);
  CHECK(broken.how ==
        "LD_LIBRARY_PATH; " + (r.root / "opt/broken/libnccl.so.2").string() + " is not a 64-bit ELF library");
}
