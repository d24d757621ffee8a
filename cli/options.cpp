#include "cli/options.hpp"

#include <iostream>

#include "common/input_error.hpp"

namespace autotune::cli {

std::optional<po::variables_map> parse_command_line(CommandSpec& spec, const Args& args) {
  spec.options.add_options()("help,h", "show this help");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(spec.options).positional(spec.positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << spec.usage << "\n\n";
      if (!spec.description.empty()) std::cout << spec.description << "\n\n";
      std::cout << spec.options << "\n";
      return std::nullopt;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError("<arguments>", 0, std::string(e.what()) + " (usage: " + spec.usage + ")");
  }
  return vm;
}

}  // namespace autotune::cli
