# Spack recipe for nccl-autotune, in a package repository of its own (Spack v1, package API v2):
#   spack repo add <checkout>/packaging/spack/spack_repo/nccl_autotune
#   spack develop --path <checkout> nccl-autotune@=main     # build this checkout (no download)
#   spack install nccl-autotune +cuda ^nccl@2.28      # or ~cuda on login nodes: everything but the NCCL runner
# There is no release tarball: a site that mirrors the repository adds `git = "<its URL>"` and tagged versions.
from spack_repo.builtin.build_systems.cmake import CMakePackage

from spack.package import *


class NcclAutotune(CMakePackage):
    """Calibrates NVIDIA NCCL for one GPU cluster and keeps every job tuned: probes the node, measures
    collectives across algorithms, protocols, channels and NIC settings, writes a profile of the rules that beat
    NCCL's own choice, and runs jobs with an NCCL tuner plugin that applies them."""

    version("main")

    variant("cuda", default=True, description="Build the NCCL runner that measures on GPUs (needs CUDA, NCCL)")
    variant("man", default=True, description="Generate the man page from --help (needs help2man)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.22:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("help2man", type="build", when="+man")

    depends_on("hwloc@2:")
    depends_on("rdma-core")  # libibverbs
    depends_on("pugixml")
    depends_on("nlohmann-json@3:")
    depends_on("fmt")
    depends_on("boost+program_options")
    depends_on("tomlplusplus@3:")
    depends_on("xxhash")
    depends_on("mpi")  # measuring across processes and nodes under mpirun or srun
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+cuda")

    # The tests need Catch2 v2 and Google Benchmark; `spack install --test=root` builds and runs them.
    depends_on("catch2@2", type="test")
    depends_on("benchmark", type="test")

    def cmake_args(self):
        args = [
            self.define("AUTOTUNE_BUILD_TESTS", self.run_tests),
            self.define("AUTOTUNE_BUILD_BENCH", self.run_tests),
            self.define("AUTOTUNE_WERROR", False),  # a newer compiler's new warning must not fail an install
            self.define_from_variant("AUTOTUNE_NCCL_RUNNER", "cuda"),
            self.define_from_variant("AUTOTUNE_MAN_PAGE", "man"),
        ]
        return args

    def setup_build_environment(self, env):
        # cmake/FindNCCL.cmake looks in $NCCL_HOME first, then $CUDA_HOME.
        if self.spec.satisfies("+cuda"):
            env.set("NCCL_HOME", self.spec["nccl"].prefix)
            env.set("CUDA_HOME", self.spec["cuda"].prefix)

    def setup_run_environment(self, env):
        # `nccl-autotune run` finds its plugin beside the binary; NCCL itself must come from the spec's NCCL.
        if self.spec.satisfies("+cuda"):
            env.prepend_path("LD_LIBRARY_PATH", self.spec["nccl"].prefix.lib)
