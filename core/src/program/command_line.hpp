// program/: the user's program as hpo sees it, its command line and the metrics it reports;
// shared by config/ (a command sweep's checks), platforms/ (specs and metric sources) and the
// command task's runner (tasks/command/runtime/runner.cpp). In hpo_core: no MPI, no torch.
//
// Private to hpo_core: the argv of one trial of a `command` sweep, expanded from the sweep
// config's `command` template exactly as W&B's agent expands it (wandb/sdk/launch/sweeps/utils.py
// create_sweep_command and create_sweep_command_args, wandb/wandb_agent.py _command_run), so that a
// program written for `wandb agent` receives the same arguments, spelled the same way (Python's
// str(), repr() and json.dumps()). One deliberate difference: W&B silently drops an unknown
// whole-element macro; here CheckCommandTemplate rejects it before any trial runs.
// Pure functions of their arguments (and, for ${envvar:NAME}, of the environment); thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "hpo/param.hpp"
#include "hpo/status.hpp"

namespace hpo {

// A hyperparameter as the user's program receives it. ParamValue has no bool: a YAML boolean is
// carried as the string "true"/"false" with boolean = true, and spelled True/False (Python) here.
// With boolean = true the value is true exactly when it holds the string "true".
struct CommandArg {
  std::string name;
  ParamValue value;
  bool boolean = false;
};

// Python's repr(float) (= str(float)): the shortest digits that parse back to `value`, in fixed
// notation with at least one fractional digit ("3.0", "0.0001", "1000000000000000.0") unless the
// decimal exponent is < -4 or >= 16, then in 'e' notation with a sign and at least two exponent
// digits ("1e-05", "1.5e-07", "1e+16"); "-0.0", "inf", "-inf", "nan".
std::string PythonFloatRepr(double value);

// Python's str() of the argument's value: integers in decimal, floats as PythonFloatRepr,
// booleans "True"/"False", strings verbatim.
std::string PythonStr(const CommandArg& arg);

// Python's json.dumps() (default settings) of the dict {name: value} in the given order, e.g.
// {"a": 1, "b": 0.001, "c": "x", "d": true}; "{}" for no args. Floats as PythonFloatRepr, but
// NaN, Infinity and -Infinity when not finite; booleans true/false. Strings (names and values,
// read as UTF-8) are escaped as with ensure_ascii: \" \\ \n \r \t \b \f, other characters outside
// ' '..'~' as \u00xx, characters above U+FFFF as a UTF-16 surrogate pair (lowercase hex); invalid
// UTF-8 becomes \ufffd as with Python's bytes.decode("utf-8", "replace"). Precondition: the names
// are distinct (they are the keys of a dict in W&B).
std::string PythonJsonDumps(const std::vector<CommandArg>& args);
// `text` with each ${param:NAME} naming one of `args` replaced by PythonStr of its value (what
// ExpandCommand does inside an element; a Katib env value's ${trialParameters.X}).
std::string ExpandParamReferences(const std::string& text, const std::vector<CommandArg>& args);

// json.dumps of one value, and of one string, spelled as in PythonJsonDumps.
std::string PythonJsonValue(const CommandArg& arg);
std::string PythonJsonString(std::string_view text);

// W&B's default command: ${env} ${interpreter} ${program} ${args}.
const std::vector<std::string>& DefaultCommandTemplate();

// Checks a command template before any trial runs: every element that is a whole-element macro
// (starts with "${" and ends with "}") after ${envvar:NAME} substitution is a known one. Elements
// that contain a ${envvar:NAME} reference (NAME in [A-Z0-9_]*) depend on the environment at run
// time and are not checked, nor are those with a ${param:NAME}; "${envvar:lower}" matches no
// reference and is an unknown macro. Returns Ok, or BadInput for the first offender, whose message
// is "command[INDEX]: unknown macro '${foo}' (known: ${env}, ${interpreter}, ...)".
Status CheckCommandTemplate(const std::vector<std::string>& command);

// What the trial-independent macros become, and where ${envvar:NAME} reads the environment.
struct CommandContext {
  std::string program;         // what ${program} becomes
  std::string interpreter;     // what ${interpreter} becomes (one element; "python" in W&B)
  std::string args_json_file;  // what ${args_json_file} becomes
  // The value of an environment variable, nullopt when unset; null means std::getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
  // Hyperparameters of the sweep that this trial lacks (a condition left them out): an element
  // with a ${param:NAME} of one of them is left out of the command, as ${args} leaves them out.
  std::set<std::string> absent_parameters;
};

// Expands `command` for one trial whose hyperparameters are `args` (an empty command is
// DefaultCommandTemplate(), as in W&B). Per element: every ${envvar:NAME} (NAME in [A-Z0-9_]*)
// becomes the variable's value, or NAME when it is unset (values are not scanned again); then an
// element that starts with "${" and ends with "}" is replaced by its macro's elements (zero or
// more), any other element is kept:
//   ${env} -> /usr/bin/env        ${interpreter}, ${program}, ${args_json_file} -> from `context`
//   ${args} -> --name=value ...   ${args_no_hyphens} -> name=value ...
//   ${args_no_equals} -> --name value ...
//   ${args_no_boolean_flags} -> --name for a true boolean, nothing for a false one, else
//                               --name=value
//   ${args_json} -> PythonJsonDumps(args)
// with each value spelled PythonStr(arg). hpo's one macro beyond W&B's: inside any element,
// ${param:NAME} becomes PythonStr of the hyperparameter NAME (what a Katib trialTemplate's
// ${trialParameters.X} becomes); an element holding one is never a whole-element macro, an
// element naming one of context.absent_parameters is left out, and any other NAME that is no
// hyperparameter stays as written. Precondition: CheckCommandTemplate(command)
// passed. An element that becomes an unknown macro only through an environment value expands to
// nothing, as in W&B.
std::vector<std::string> ExpandCommand(const std::vector<std::string>& command,
                                       const std::vector<CommandArg>& args,
                                       const CommandContext& context);

// Whether an element of `command` is ${args_json_file} (the caller then writes
// PythonJsonDumps(args) to context.args_json_file before running the trial). Does not see a
// ${args_json_file} that an environment value would produce.
bool UsesArgsJsonFile(const std::vector<std::string>& command);

}  // namespace hpo
