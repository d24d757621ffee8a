#pragma once
// The words every module shares: NCCL's collectives, algorithms and protocols with the ids NCCL uses for
// them (ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*), their names as NCCL spells them, and which combinations NCCL
// allows for which collective. See ../shared/NCCL-FACTS.md.

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace autotune::nccl {

// Values are NCCL's own ids; the plugin passes them straight through.
enum class Collective : int { broadcast = 0, reduce = 1, allgather = 2, reducescatter = 3, allreduce = 4 };
enum class Algorithm : int {
  tree = 0,
  ring = 1,
  collnet_direct = 2,
  collnet_chain = 3,
  nvls = 4,
  nvls_tree = 5,
  pat = 6
};
enum class Protocol : int { ll = 0, ll128 = 1, simple = 2 };

inline constexpr int kNumCollectives = 5;
inline constexpr int kNumAlgorithms = 7;
inline constexpr int kNumProtocols = 3;
// The most channels a communicator has (MAXCHANNELS in NCCL's src/include/device.h, 2.28): the bound of a
// forced channel count.
inline constexpr int kMaxChannels = 64;

inline constexpr std::array<Collective, kNumCollectives> kAllCollectives = {
    Collective::broadcast, Collective::reduce, Collective::allgather, Collective::reducescatter,
    Collective::allreduce};
inline constexpr std::array<Algorithm, kNumAlgorithms> kAllAlgorithms = {Algorithm::tree,
                                                                         Algorithm::ring,
                                                                         Algorithm::collnet_direct,
                                                                         Algorithm::collnet_chain,
                                                                         Algorithm::nvls,
                                                                         Algorithm::nvls_tree,
                                                                         Algorithm::pat};
inline constexpr std::array<Protocol, kNumProtocols> kAllProtocols = {Protocol::ll, Protocol::ll128,
                                                                      Protocol::simple};

// Lower-case canonical names: "allreduce", "collnetdirect", "ll128". NCCL's own spellings ("AllReduce",
// "CollNetDirect", "LL128", "Simple") parse too: parsing is case-insensitive.
std::string_view name(Collective c);
std::string_view name(Algorithm a);
std::string_view name(Protocol p);
// NCCL's display spelling, as in its logs and NCCL_ALGO documentation: "AllReduce", "NVLSTree", "Simple".
std::string_view nccl_name(Collective c);
std::string_view nccl_name(Algorithm a);
std::string_view nccl_name(Protocol p);

std::optional<Collective> parse_collective(std::string_view text);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::optional<Protocol> parse_protocol(std::string_view text);

// From NCCL's integer ids; nullopt when out of range (p2p function ids, garbage from a wrong ABI version).
std::optional<Collective> collective_from_id(int id);
std::optional<Algorithm> algorithm_from_id(int id);
std::optional<Protocol> protocol_from_id(int id);

// Whether NCCL can run this collective with this algorithm and protocol at all (independent of topology):
// Broadcast/Reduce: Ring only; AllGather/ReduceScatter: Ring, PAT, NVLS, CollNetDirect; AllReduce: all but
// PAT; NVLS, NVLSTree and PAT take Simple only.
bool is_allowed(Collective c, Algorithm a, Protocol p);
bool is_allowed(Collective c, Algorithm a);

// The comma list of the allowed names, for error messages ("ring, pat, nvls, collnetdirect").
std::string allowed_algorithms_text(Collective c);

// nccl-tests' bus bandwidth factor: busbw = algbw x factor for n ranks.
double bus_bandwidth_factor(Collective c, int ranks);

}  // namespace autotune::nccl
