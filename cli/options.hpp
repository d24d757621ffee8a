#pragma once
// Boost.Program_options with the project's conventions: bad usage is an InputError (exit 2), `--help`
// prints the usage line and the option table.

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "nccl/operation.hpp"
#include "nccl/vocabulary.hpp"

namespace autotune::cli {

namespace po = boost::program_options;

struct CommandSpec {
  std::string usage;        // "nccl-autotune probe [--input FILE] [--format text|json|nccl-xml]"
  std::string description;  // a paragraph shown under the usage by --help
  po::options_description options{"options"};
  po::positional_options_description positional;
};

// Parses args. Returns nullopt after printing help (the command then returns 0). Adds --help itself.
// Throws InputError("<arguments>", 0, "...") for unknown options, missing values, bad values.
std::optional<po::variables_map> parse_command_line(CommandSpec& spec, const Args& args);

// "allreduce,allgather" -> collectives; InputError naming `option` for an unknown or empty name.
std::vector<nccl::Collective> parse_collective_list(const std::string& text, const std::string& option);
// The same for what bench measures: the collectives and the point-to-point operations (nccl/operation.hpp).
std::vector<nccl::Operation> parse_operation_list(const std::string& text, const std::string& option);

// "3%" or "0.03" (0 to 10); InputError naming `option` otherwise.
double parse_gain(const std::string& text, const std::string& option);

// A whole number 0..2^64-1; "-1" is refused (a stream parse would take it as 2^64-1).
uint64_t parse_seed(const std::string& text, const std::string& option);

// "20m", "90s", "1h", "1h30m": every number with its unit, > 0; InputError naming `option` otherwise.
double parse_duration(const std::string& text, const std::string& option);

// --watchdog-scale: a finite number > 0 (InputError otherwise), returned as given.
double require_watchdog_scale(double scale);

}  // namespace autotune::cli
