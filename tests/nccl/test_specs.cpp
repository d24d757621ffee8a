#include <catch2/catch.hpp>

#include "common/byte_size.hpp"
#include "common/input_error.hpp"
#include "nccl/algo_proto_spec.hpp"
#include "nccl/env_policy.hpp"
#include "nccl/ib_hca_spec.hpp"
#include "nccl/socket_ifname_spec.hpp"

using namespace autotune::nccl;
using autotune::InputError;

namespace {
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("byte sizes: parse, format, round trip", "[byte_size]") {
  CHECK(autotune::parse_byte_size("8") == 8u);
  CHECK(autotune::parse_byte_size("64K") == 65536u);
  CHECK(autotune::parse_byte_size("64k") == 65536u);
  CHECK(autotune::parse_byte_size("64KB") == 65536u);
  CHECK(autotune::parse_byte_size("1M") == 1048576u);
  CHECK(autotune::parse_byte_size("8G") == 8ull << 30);
  CHECK(autotune::parse_byte_size("2T") == 2ull << 40);
  CHECK(autotune::parse_byte_size("0") == 0u);
  CHECK(autotune::parse_byte_size("18446744073709551615") == UINT64_MAX);
  CHECK_FALSE(autotune::parse_byte_size("18446744073709551616"));
  CHECK_FALSE(autotune::parse_byte_size("16777216T"));
  for (const char* bad : {"", "K", "-1", " 8", "8 ", "1.5M", "8X", "8KK", "0x10"}) {
    INFO(bad);
    CHECK_FALSE(autotune::parse_byte_size(bad));
  }
  CHECK(autotune::format_byte_size(0) == "0");
  CHECK(autotune::format_byte_size(8) == "8");
  CHECK(autotune::format_byte_size(1 << 20) == "1M");
  CHECK(autotune::format_byte_size(1536 * 1024) == "1536K");
  CHECK(autotune::format_byte_size(8ull << 30) == "8G");
  CHECK(autotune::format_byte_size(1023) == "1023");
  CHECK(autotune::format_byte_size(4ull << 50) == "4096T");
  for (uint64_t v : std::initializer_list<uint64_t>{0ull, 1ull, 1000ull, 1024ull, 1025ull, 3ull << 20,
                                                    (1ull << 40) + 1024, UINT64_MAX})
    CHECK(autotune::parse_byte_size(autotune::format_byte_size(v)) == v);
  CHECK(autotune::human_byte_size(8) == "8 B");
  CHECK(autotune::human_byte_size(1536) == "1.5 KiB");
  CHECK(autotune::human_byte_size(64ull << 20) == "64 MiB");
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO: parse and round trip", "[algo_proto]") {
  AlgoSpec a = parse_algo_spec("ring,tree;allreduce:nvls,ring");
  REQUIRE(a.entries.size() == 2);
  CHECK_FALSE(a.entries[0].collective);
  CHECK(a.entries[0].names == std::vector<Algorithm>{Algorithm::ring, Algorithm::tree});
  CHECK(a.entries[1].collective == Collective::allreduce);
  CHECK(format_algo_spec(a) == "Ring,Tree;AllReduce:NVLS,Ring");
  CHECK(parse_algo_spec(format_algo_spec(a)) == a);

  AlgoSpec b = parse_algo_spec("AllGather:^PAT;ReduceScatter:Ring");
  CHECK(b.entries[0].collective == Collective::allgather);
  CHECK(b.entries[0].exclude);
  CHECK(format_algo_spec(b) == "AllGather:^PAT;ReduceScatter:Ring");
  CHECK(parse_algo_spec(format_algo_spec(b)) == b);

  ProtoSpec p = parse_proto_spec("^LL128");
  CHECK(p.entries[0].exclude);
  CHECK(p.entries[0].names == std::vector<Protocol>{Protocol::ll128});
  CHECK(format_proto_spec(p) == "^LL128");
  CHECK(format_proto_spec(parse_proto_spec("simple;allreduce:ll,ll128")) == "Simple;AllReduce:LL,LL128");
  CHECK(format_algo_spec(parse_algo_spec("collnetdirect,NVLSTREE")) == "CollNetDirect,NVLSTree");
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO: errors", "[algo_proto]") {
  CHECK(error_of([] { parse_algo_spec("rign"); }) ==
        "NCCL_ALGO: expected one of tree, ring, collnetdirect, collnetchain, nvls, nvlstree, pat; found "
        "\"rign\"");
  CHECK(error_of([] { parse_algo_spec(""); }) == "NCCL_ALGO: expected a list of names; found an empty value");
  CHECK(error_of([] { parse_algo_spec("ring;tree"); }) ==
        "NCCL_ALGO: expected 'collective:' before entry 2 (only the first may omit it); found \"tree\"");
  CHECK(
      error_of([] { parse_algo_spec("allreduse:ring"); }) ==
      "NCCL_ALGO: expected a collective before ':' (broadcast, reduce, allgather, reducescatter, allreduce); "
      "found \"allreduse\"");
  CHECK(error_of([] { parse_algo_spec("allreduce:ring;AllReduce:tree"); }) ==
        "NCCL_ALGO: expected each collective once; found \"allreduce\" twice");
  CHECK(
      error_of([] { parse_algo_spec("ring,"); }) ==
      "NCCL_ALGO: expected one of tree, ring, collnetdirect, collnetchain, nvls, nvlstree, pat; found \"\"");
  CHECK(error_of([] { parse_proto_spec("LL256"); }) ==
        "NCCL_PROTO: expected one of ll, ll128, simple; found \"LL256\"");
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO: what a value lets NCCL use per collective", "[algo_proto]") {
  // The collective's own entry decides; otherwise the unprefixed first entry; otherwise everything goes.
  AlgoSpec a = parse_algo_spec("ring,tree;allreduce:nvls");
  CHECK(selects(a, Collective::allgather, Algorithm::ring));
  CHECK_FALSE(selects(a, Collective::allgather, Algorithm::pat));
  CHECK(selects(a, Collective::allreduce, Algorithm::nvls));
  CHECK_FALSE(selects(a, Collective::allreduce, Algorithm::ring));
  AlgoSpec only_gather = parse_algo_spec("allgather:^pat");
  CHECK_FALSE(selects(only_gather, Collective::allgather, Algorithm::pat));
  CHECK(selects(only_gather, Collective::allgather, Algorithm::ring));
  CHECK(selects(only_gather, Collective::allreduce, Algorithm::pat));
  // Turning LL128 on needs it named; an exclusion of something else allows it without naming it.
  ProtoSpec excl = parse_proto_spec("^ll");
  CHECK(selects(excl, Collective::allreduce, Protocol::ll128));
  CHECK_FALSE(selects(excl, Collective::allreduce, Protocol::ll));
  CHECK_FALSE(selects_explicitly(excl, Collective::allreduce, Protocol::ll128));
  ProtoSpec named = parse_proto_spec("simple;allreduce:ll128");
  CHECK(selects_explicitly(named, Collective::allreduce, Protocol::ll128));
  CHECK_FALSE(selects_explicitly(named, Collective::broadcast, Protocol::ll128));
  CHECK(selects(named, Collective::broadcast, Protocol::simple));
}

TEST_CASE("NCCL_IB_HCA: parse, round trip, selection", "[ib_hca]") {
  IbHcaSpec s = parse_ib_hca_spec("mlx5_0:1,mlx5_1");
  CHECK_FALSE(s.exclude);
  CHECK_FALSE(s.exact);
  REQUIRE(s.devices.size() == 2);
  CHECK(s.devices[0] == IbHcaDevice{"mlx5_0", 1});
  CHECK(s.devices[1] == IbHcaDevice{"mlx5_1", std::nullopt});
  for (const char* text : {"mlx5_0:1,mlx5_1", "^mlx5_2", "=mlx5_0:1,mlx5_3:2", "^=mlx5_10", "mlx5"}) {
    INFO(text);
    CHECK(format_ib_hca_spec(parse_ib_hca_spec(text)) == text);
  }
  IbHcaSpec prefix = parse_ib_hca_spec("mlx5_1");
  CHECK(prefix.selects("mlx5_1", 1));
  CHECK(prefix.selects("mlx5_10", 1));  // a prefix, as NCCL matches it
  CHECK_FALSE(prefix.selects("mlx5_0", 1));
  IbHcaSpec exact = parse_ib_hca_spec("=mlx5_1:1");
  CHECK(exact.selects("mlx5_1", 1));
  CHECK_FALSE(exact.selects("mlx5_10", 1));
  CHECK_FALSE(exact.selects("mlx5_1", 2));
  IbHcaSpec excl = parse_ib_hca_spec("^=mlx5_1");
  CHECK_FALSE(excl.selects("mlx5_1", 1));
  CHECK(excl.selects("mlx5_10", 1));
}

TEST_CASE("NCCL_IB_HCA: errors", "[ib_hca]") {
  CHECK(error_of([] { parse_ib_hca_spec(""); }) ==
        "NCCL_IB_HCA: expected device names such as mlx5_0 or mlx5_0:1; found \"\"");
  CHECK(error_of([] { parse_ib_hca_spec("^="); }) ==
        "NCCL_IB_HCA: expected device names such as mlx5_0 or mlx5_0:1; found \"^=\"");
  CHECK(error_of([] { parse_ib_hca_spec("mlx5_0:0"); }) ==
        "NCCL_IB_HCA: expected a port number 1..255 after ':'; found \"0\"");
  CHECK(error_of([] { parse_ib_hca_spec("mlx5_0:x"); }) ==
        "NCCL_IB_HCA: expected a port number 1..255 after ':'; found \"x\"");
  CHECK(error_of([] { parse_ib_hca_spec("mlx5_0,,mlx5_1"); }) ==
        "NCCL_IB_HCA: expected a device name before each ',' or ':'; found \"\"");
  CHECK(error_of([] { parse_ib_hca_spec("mlx5 0"); }) ==
        "NCCL_IB_HCA: expected a device name (letters, digits, '_', '-', '.'); found \"mlx5 0\"");
}

TEST_CASE("env policy: what no single entry shows names the key to blame", "[env_policy]") {
  CHECK_FALSE(env_set_problem({{"NCCL_MIN_NCHANNELS", "16"}}));
  CHECK_FALSE(env_set_problem({{"NCCL_MIN_NCHANNELS", "8"}, {"NCCL_MAX_NCHANNELS", "8"}}));
  const auto problem = env_set_problem({{"NCCL_MAX_NCHANNELS", "8"}, {"NCCL_MIN_NCHANNELS", "16"}});
  REQUIRE(problem);
  CHECK(problem->key == "NCCL_MIN_NCHANNELS");
  CHECK(problem->message == "NCCL_MIN_NCHANNELS: expected at most NCCL_MAX_NCHANNELS (8); found \"16\"");
}

TEST_CASE("env policy: allowlist and value syntax", "[env_policy]") {
  CHECK(is_allowed_env_key("NCCL_IB_HCA"));
  CHECK_FALSE(is_allowed_env_key("LD_PRELOAD"));
  CHECK_FALSE(is_allowed_env_key("NCCL_TUNER_PLUGIN"));
  auto keys = allowed_env_keys();
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  CHECK_NOTHROW(check_env_entry("NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"));
  CHECK_NOTHROW(check_env_entry("NCCL_ALGO", "ring;allreduce:tree,ring"));
  CHECK_NOTHROW(check_env_entry("NCCL_CROSS_NIC", "2"));
  CHECK_NOTHROW(check_env_entry("NCCL_NET_GDR_LEVEL", "PHB"));
  CHECK_NOTHROW(check_env_entry("NCCL_NET_GDR_LEVEL", "3"));
  CHECK(error_of([] { check_env_entry("LD_PRELOAD", "/tmp/x.so"); }) ==
        "LD_PRELOAD: expected an NCCL tuning variable; found a variable that loads code, which a profile may "
        "never set");
  CHECK(error_of([] { check_env_entry("NCCL_NET_PLUGIN", "evil"); }).find("loads code") != std::string::npos);
  CHECK(error_of([] {
          check_env_entry("NCCL_DEBUG", "INFO");
        }).rfind("NCCL_DEBUG: expected one of NCCL_ALGO, ", 0) == 0);
  CHECK(error_of([] { check_env_entry("NCCL_CROSS_NIC", "3"); }) ==
        "NCCL_CROSS_NIC: expected an integer 0..2; found \"3\"");
  CHECK(error_of([] { check_env_entry("NCCL_MAX_NCHANNELS", "1e3"); }) ==
        "NCCL_MAX_NCHANNELS: expected an integer 1..64; found \"1e3\"");
  CHECK(error_of([] { check_env_entry("NCCL_IB_HCA", "mlx5_0$(reboot)"); }) ==
        "NCCL_IB_HCA: expected no spaces, quotes or shell metacharacters; found \"mlx5_0$(reboot)\"");
  CHECK(error_of([] { check_env_entry("NCCL_IB_HCA", "mlx5_0\n"); }) ==
        "NCCL_IB_HCA: expected no control characters; found \"\\x0a\"");
  CHECK(error_of([] { check_env_entry("NCCL_ALGO", "ring;rm"); }) ==
        "NCCL_ALGO: expected 'collective:' before entry 2 (only the first may omit it); found \"rm\"");
  CHECK(error_of([] { check_env_entry("NCCL_P2P_LEVEL", "NVLINK"); }) ==
        "NCCL_P2P_LEVEL: expected a path level (LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS) or an "
        "integer 0..5; found \"NVLINK\"");
}

TEST_CASE("env policy: the point-to-point settings with NCCL 2.28-2.30's values", "[env][p2p]") {
  for (const char* key :
       {"NCCL_P2P_NET_CHUNKSIZE", "NCCL_P2P_NVL_CHUNKSIZE", "NCCL_P2P_PCI_CHUNKSIZE",
        "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_PXN_DISABLE", "NCCL_P2P_PXN_LEVEL", "NCCL_P2P_LEVEL",
        "NCCL_NET_GDR_LEVEL", "NCCL_IB_QPS_PER_CONNECTION", "NCCL_BUFFSIZE"})
    CHECK(is_allowed_env_key(key));
  CHECK_NOTHROW(check_env_entry("NCCL_P2P_NET_CHUNKSIZE", "524288"));
  CHECK_NOTHROW(check_env_entry("NCCL_P2P_PXN_LEVEL", "0"));
  CHECK_NOTHROW(check_env_entry("NCCL_P2P_LEVEL", "P2C"));
  CHECK(error_of([] { check_env_entry("NCCL_PXN_DISABLE", "2"); }) ==
        "NCCL_PXN_DISABLE: expected an integer 0..1; found \"2\"");
  CHECK(error_of([] { check_env_entry("NCCL_P2P_PXN_LEVEL", "3"); }) ==
        "NCCL_P2P_PXN_LEVEL: expected an integer 0..2; found \"3\"");
  CHECK(error_of([] { check_env_entry("NCCL_P2P_NVL_CHUNKSIZE", "1024"); }) ==
        "NCCL_P2P_NVL_CHUNKSIZE: expected an integer 4096..8388608; found \"1024\"");
  // ncclGetLevel reads names up to SYS only: NET would be ignored by NCCL, so it is refused here.
  CHECK_THROWS_AS(check_env_entry("NCCL_NET_GDR_LEVEL", "NET"), InputError);
  CHECK_THROWS_AS(check_env_entry("NCCL_P2P_LEVEL", "7"), InputError);
  // A chunk NCCL would cut to NCCL_BUFFSIZE / 8.
  auto cut = env_set_problem({{"NCCL_P2P_NET_CHUNKSIZE", "1048576"}});
  REQUIRE(cut);
  CHECK(cut->key == "NCCL_P2P_NET_CHUNKSIZE");
  CHECK(cut->message ==
        "NCCL_P2P_NET_CHUNKSIZE: expected at most NCCL's default NCCL_BUFFSIZE 4194304 / 8 = 524288 (NCCL "
        "cuts a "
        "larger chunk to it); found \"1048576\"");
  CHECK_FALSE(env_set_problem({{"NCCL_P2P_NET_CHUNKSIZE", "1048576"}, {"NCCL_BUFFSIZE", "8388608"}}));
  CHECK(env_set_problem({{"NCCL_P2P_NVL_CHUNKSIZE", "524288"}, {"NCCL_BUFFSIZE", "2097152"}})->key ==
        "NCCL_P2P_NVL_CHUNKSIZE");
}

// NCCL's socket.cc and utils.cc (v2.28.9-1): `^` then `=`, comma-separated prefixes; a value of one
// character is ignored; at most 16 names; ports are parsed but mean nothing for sockets.
TEST_CASE("NCCL_SOCKET_IFNAME: parse, round trip and selection as NCCL reads it", "[socket_ifname][health]") {
  const SocketIfnameSpec exact = parse_socket_ifname_spec("=eth0");
  CHECK(exact.exact);
  CHECK(exact.names == std::vector<std::string>{"eth0"});
  CHECK(exact.selects("eth0"));
  CHECK_FALSE(exact.selects("eth01"));
  const SocketIfnameSpec prefix = parse_socket_ifname_spec("ib");
  CHECK(prefix.selects("ib0"));
  CHECK(prefix.selects("ibp12s0"));
  CHECK_FALSE(prefix.selects("eth0"));
  const SocketIfnameSpec not_these = parse_socket_ifname_spec("^docker,lo");
  CHECK(not_these.exclude);
  CHECK_FALSE(not_these.selects("docker0"));
  CHECK_FALSE(not_these.selects("lo"));
  CHECK(not_these.selects("ens1f0"));
  CHECK_FALSE(parse_socket_ifname_spec("^=eth0").selects("eth0"));
  CHECK(parse_socket_ifname_spec("^=eth0").selects("eth01"));
  for (const char* text : {"=eth0", "ib", "^docker,lo", "^=bond0.100,eth1", "enp1s0f0np0"}) {
    INFO(text);
    CHECK(format_socket_ifname_spec(parse_socket_ifname_spec(text)) == text);
  }
}

TEST_CASE("NCCL_SOCKET_IFNAME: errors", "[socket_ifname][health]") {
  CHECK(error_of([] { parse_socket_ifname_spec("e"); }) ==
        "NCCL_SOCKET_IFNAME: expected at least two characters (NCCL ignores a shorter value and picks an "
        "interface itself); found \"e\"");
  CHECK(error_of([] { parse_socket_ifname_spec("^="); }) ==
        "NCCL_SOCKET_IFNAME: expected interface names such as =eth0, ib or ^docker,lo; found \"^=\"");
  CHECK(error_of([] { parse_socket_ifname_spec("eth0,,ib0"); }) ==
        "NCCL_SOCKET_IFNAME: expected an interface name before each ',' or ':'; found \"\"");
  CHECK(
      error_of([] { parse_socket_ifname_spec("eth0:1"); }) ==
      "NCCL_SOCKET_IFNAME: expected interface names without ':port' (NCCL ignores ports for sockets); found "
      "\"eth0:1\"");
  CHECK(error_of([] { parse_socket_ifname_spec("a23456789012345x"); }) ==
        "NCCL_SOCKET_IFNAME: expected interface names of at most 15 characters (Linux's limit); found "
        "\"a23456789012345x\"");
  std::string many = "e0";
  for (int i = 1; i < 17; ++i) many += ",e" + std::to_string(i);
  CHECK(error_of([&] { parse_socket_ifname_spec(many); }) ==
        "NCCL_SOCKET_IFNAME: expected at most 16 interface names (NCCL drops the rest); found \"" + many +
            "\"");
}

TEST_CASE("env policy: NCCL_IB_GID_INDEX and NCCL_SOCKET_IFNAME join the allowlist", "[env_policy][health]") {
  CHECK(is_allowed_env_key("NCCL_IB_GID_INDEX"));
  CHECK(is_allowed_env_key("NCCL_SOCKET_IFNAME"));
  CHECK_NOTHROW(check_env_entry("NCCL_IB_GID_INDEX", "3"));
  CHECK_NOTHROW(check_env_entry("NCCL_SOCKET_IFNAME", "=eth0"));
  CHECK_NOTHROW(check_env_entry("NCCL_SOCKET_IFNAME", "^docker,lo"));
  CHECK(error_of([] { check_env_entry("NCCL_IB_GID_INDEX", "256"); }) ==
        "NCCL_IB_GID_INDEX: expected an integer 0..255; found \"256\"");
  CHECK(error_of([] { check_env_entry("NCCL_IB_GID_INDEX", "-1"); }) ==
        "NCCL_IB_GID_INDEX: expected an integer 0..255; found \"-1\"");
  // NCCL reads its integers with strtoll(..., 0): a leading zero makes the rest octal.
  CHECK(error_of([] { check_env_entry("NCCL_IB_GID_INDEX", "010"); }) ==
        "NCCL_IB_GID_INDEX: expected an integer 0..255 without leading zeros (NCCL reads 010 as octal 8); "
        "found "
        "\"010\"");
  CHECK_NOTHROW(check_env_entry("NCCL_IB_GID_INDEX", "0"));
  CHECK(error_of([] { check_env_entry("NCCL_SOCKET_IFNAME", "eth0 ib0"); }) ==
        "NCCL_SOCKET_IFNAME: expected no spaces, quotes or shell metacharacters; found \"eth0 ib0\"");
}
