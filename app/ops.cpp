// `tapegrad ops`: every op graph files take, read from the op list (ops/ops.hpp) and each op's own
// descriptor: its name, header, operands, parameters with their defaults, shapes and formula. Text for
// people, JSON for programs, markdown for tables (README's op table holds rows of it; a ctest checks each).
#include "commands.hpp"

#include <tapegrad/ops/ops.hpp>

#include <nlohmann/json.hpp>

#include <sstream>

namespace tapegrad::app {
namespace {

std::string arity_text(const OpInfo& op) {
  std::string text = std::to_string(op.arity) + (op.variadic                ? " or more"
                                                 : op.optional_operands > 0 ? " to " + std::to_string(max_operands(op))
                                                                            : "");
  for (const ConstOperand& c : op.const_operands)
    text += std::string(" + ") + (c.optional ? "optional " : "") + (c.boolean ? "bool" : "int") + " constant " +
            std::string(c.param) + " (argument " + std::to_string(c.position) + ")";
  return text;
}

/// The parameters graph files take (C++-only options are not shown).
std::vector<const ParamSpec*> file_params(const OpInfo& op) {
  std::vector<const ParamSpec*> out;
  for (const ParamSpec& p : op.params)
    if (p.in_files) out.push_back(&p);
  return out;
}

std::string param_text(const ParamSpec& p) {
  return std::string(p.name) + " (" + param_type_name(p.type) +
         (p.required() ? ", required"
          : p.optional ? ", optional"
                       : ", default " + std::string(p.default_value)) +
         ")";
}

/// The checker's flags, in words.
std::vector<std::string> flags(const OpInfo& op) {
  std::vector<std::string> out;
  if (op.row_normaliser) out.emplace_back("row normaliser (saturation guard)");
  if (op.kink) out.emplace_back("kink (kink guard)");
  if (op.ties) out.emplace_back("ties (kink guard)");
  if (op.masks) out.emplace_back("masks (-inf on purpose)");
  for (std::size_t k = 0; k < op.domains.size(); ++k)
    if (op.domains[k] != Domain::any)
      out.emplace_back("domain: entries of operand " + std::to_string(k) + " " +
                       std::string(domain_condition(op.domains[k])));
  return out;
}

/// A parameter's default as JSON: a number or integer as such (its exact decimal text kept for numbers), null
/// when the parameter is required or optional without a default.
nlohmann::ordered_json default_json(const ParamSpec& p) {
  if (p.default_value.empty()) return nullptr;
  const std::string text(p.default_value);
  if (p.type == ParamType::integer) return std::stol(text);
  if (p.type == ParamType::boolean) return text == "true";
  if (p.type == ParamType::choice) return text;
  return text; // a number's exact decimal, as a graph file may write it
}

/// Per operand, where its entries must lie: "any", "positive" or "nonzero".
nlohmann::ordered_json domains_json(const OpInfo& op) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < std::max(op.arity, op.domains.size()); ++k) {
    const Domain d = operand_domain(op, k);
    out.push_back(d == Domain::positive ? "positive" : d == Domain::nonzero ? "nonzero" : "any");
  }
  return out;
}

std::string text() {
  std::ostringstream out;
  out << "tapegrad ops: the " << BuiltinOps::size << " ops of graph files (ops/ops.hpp lists them)\n";
  for (const OpInfo* op : BuiltinOps::infos) {
    out << "\n"
        << op->name << "  (node " << op->node << ", ops/" << op->file << "; C++ " << op->call << ")\n"
        << "  operands   " << arity_text(*op) << ": " << op->shapes << "\n"
        << "  forward    " << op->formula << "\n";
    for (const ParamSpec* p : file_params(*op))
      out << "  parameter  " << param_text(*p) << ": " << p->doc << "\n";
    for (const std::string& f : flags(*op))
      out << "  checker    " << f << "\n";
    if (!op->dual.empty()) out << "  Dual<T>    needs " << op->dual << "\n";
  }
  return out.str();
}

std::string json() {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpInfo* op : BuiltinOps::infos) {
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (const ParamSpec* p : file_params(*op))
      params.push_back({{"name", p->name},
                        {"type", param_type_name(p->type)},
                        {"required", p->required()},
                        {"default", default_json(*p)},
                        {"doc", p->doc}});
    ops.push_back({{"name", op->name},
                   {"node", op->node},
                   {"call", op->call},
                   {"file", "ops/" + std::string(op->file)},
                   {"arity", op->arity},
                   {"variadic", op->variadic},
                   {"optional_operands", op->optional_operands},
                   {"parameters", params},
                   {"formula", op->formula},
                   {"shapes", op->shapes},
                   {"row_normaliser", op->row_normaliser},
                   {"kink", op->kink},
                   {"ties", op->ties},
                   {"masks", op->masks},
                   {"domains", domains_json(*op)},
                   {"dual", op->dual}});
  }
  return nlohmann::ordered_json{{"ops", ops}}.dump(2) + "\n";
}

std::string markdown() {
  std::ostringstream out;
  out << "| op | C++ | operands | parameters | forward | header |\n|---|---|---|---|---|---|\n";
  for (const OpInfo* op : BuiltinOps::infos) {
    std::string params;
    for (const ParamSpec* p : file_params(*op))
      params += (params.empty() ? "" : "; ") + param_text(*p);
    out << "| `" << op->name << "` | `" << op->call << "` | " << arity_text(*op) << ": `" << op->shapes << "` | "
        << (params.empty() ? "none" : params) << " | `" << op->formula << "` | ops/" << op->file << " |\n";
  }
  return out.str();
}

} // namespace

int run_ops_command(const OpsCommand& cmd, std::ostream& out) {
  out << (cmd.format == "json" ? json() : cmd.format == "markdown" ? markdown() : text());
  return 0;
}

} // namespace tapegrad::app
