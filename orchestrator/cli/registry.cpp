// The subcommand registry. Registrations run during static initialisation of the cmd_*.cpp objects, so the
// list lives in a function-local static (constructed on first use, whatever the initialisation order).
#include <algorithm>
#include <vector>

#include "orchestrator/cli/command.hpp"

namespace bootstorm::cli {
namespace {

std::vector<Command>& commands() {
  static std::vector<Command> list;
  return list;
}

}  // namespace

void register_command(Command command) {
  auto& list = commands();
  // Keep the list sorted by (order, name) so --help and dispatch see one stable order.
  auto pos = std::upper_bound(list.begin(), list.end(), command, [](const Command& a, const Command& b) {
    return std::tie(a.order, a.name) < std::tie(b.order, b.name);
  });
  list.insert(pos, std::move(command));
}

const std::vector<Command>& registered_commands() {
  return commands();
}

}  // namespace bootstorm::cli
